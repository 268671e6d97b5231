// The newcomer's path: demo mode prints keys that work; the same keys never work outside demo mode.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHILD_ADMIN_TOKEN, spawnGateway, type ChildGateway } from './support/child-gateway.js';

const DEMO = { DEMO_MODE: 'true', ADMIN_TOKEN: '' };

async function banner(gw: ChildGateway): Promise<string> {
  for (let i = 0; i < 100 && !/admin token:/.test(gw.output()); i++) await new Promise((r) => setTimeout(r, 50));
  return gw.output();
}

const field = (text: string, name: string) => new RegExp(`${name}:\\s+(.+)`).exec(text)?.[1]?.trim() ?? '';
const v1Lead = (address: string, key: string, eventId: string) =>
  fetch(`${address}/api/integrations/v1/leads/`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ event_id: eventId, first_name: 'Aziza', phone: '+998901234567' }),
  });
const legacyBoards = (address: string, key: string) =>
  fetch(`${address}/api/bots/api/boards/`, { headers: { 'x-bot-api-key': key } });
const admin = (address: string, token: string, method: string, path: string) =>
  fetch(`${address}/admin/v1${path}`, { method, headers: { authorization: `Bearer ${token}` } });

describe('demo mode', () => {
  it('prints a working v1 key, legacy key and admin token, with the state they imply, then exits 0 on SIGTERM', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-demo-'));
    const gw = await spawnGateway({ env: { ...DEMO, DATABASE_PATH: join(dir, 'demo.db') }, capture: true });
    const text = await banner(gw);
    const v1Key = field(text, 'v1 key');
    const legacyKey = field(text, 'legacy key');
    const adminToken = field(text, 'admin token');
    expect(field(text, 'integration')).toBe('brightpath:telegram-bot (migrating)');

    expect((await v1Lead(gw.address, v1Key, 'demo-1')).status).toBe(201);
    expect((await legacyBoards(gw.address, legacyKey)).status).toBe(200);
    const report = await (
      await admin(gw.address, adminToken, 'GET', '/integrations/brightpath:telegram-bot/report')
    ).json();
    expect(report).toMatchObject({ state: 'migrating' });
    expect(JSON.stringify(report)).not.toMatch(/no v1 key has been issued/);
    expect((await fetch(`${gw.address}/readyz`)).status).toBe(200);
    expect(await gw.stop()).toBe(0);
  });
});

describe('demo keys outside demo mode', () => {
  it('are revoked by a production start on a demo database, audited, and reported revoked by the next demo start', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-demo-'));
    const env = { DATABASE_PATH: join(dir, 'demo.db') };
    const demo = await spawnGateway({ env: { ...DEMO, ...env }, capture: true });
    const text = await banner(demo);
    const [v1Key, legacyKey] = [field(text, 'v1 key'), field(text, 'legacy key')];
    await demo.stop();

    const production = await spawnGateway({ env, capture: true });
    expect((await v1Lead(production.address, v1Key, 'prod-1')).status).toBe(401);
    expect((await legacyBoards(production.address, legacyKey)).status).toBe(401);
    expect(production.output()).toMatch(/"revoked":2,.*"msg":"revoked the demo keys found in the database/);
    const audit = await (
      await admin(production.address, CHILD_ADMIN_TOKEN, 'GET', '/integrations/brightpath:telegram-bot/audit')
    ).text();
    expect(audit.match(/"key_revoked"/g)).toHaveLength(2);
    expect(audit).toContain('demo keys are published and never work outside demo mode');
    await production.stop();

    // Demo mode again: the revoked keys stay revoked and the banner says so instead of printing them.
    const again = await spawnGateway({ env: { ...DEMO, ...env }, capture: true });
    const second = await banner(again);
    expect(field(second, 'v1 key')).toMatch(/^revoked at \S+; live now: none/);
    expect(field(second, 'legacy key')).toMatch(/^revoked at \S+; live now: none/);
    expect(second).not.toContain(v1Key);
    expect((await v1Lead(again.address, v1Key, 'demo-2')).status).toBe(401);
    await again.stop();
  });

  it('after a renewal in demo mode, the banner prints the current key state, not the revoked demo key', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-demo-'));
    const env = { ...DEMO, DATABASE_PATH: join(dir, 'demo.db') };
    const first = await spawnGateway({ env, capture: true });
    const text = await banner(first);
    const renewed = await admin(
      first.address,
      field(text, 'admin token'),
      'POST',
      '/integrations/brightpath:telegram-bot/keys/renew',
    );
    expect(renewed.status).toBe(201);
    const { prefix } = (await renewed.json()) as { prefix: string };
    await first.stop();

    const second = await spawnGateway({ env, capture: true });
    const again = await banner(second);
    expect(field(again, 'v1 key')).toBe(
      `revoked at ${/revoked at (\S+);/.exec(field(again, 'v1 key'))![1]}; live now: ${prefix}… (shown once when issued)`,
    );
    expect(again).not.toContain(field(text, 'v1 key'));
    await second.stop();
  });
});
