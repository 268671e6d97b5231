// The CLI as a child process, writing the same SQLite file a running gateway serves from.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_RULES, startGateway, type Gateway } from '../helper.js';
import { newId } from '../../src/store/ids.js';
import { builtCli } from '../support/child-gateway.js';

let gw: Gateway;
let base: string;
const ROOT = join(import.meta.dirname, '..', '..');

beforeAll(async () => {
  gw = await startGateway();
  base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(() => gw.close());

const cli = (...args: string[]) => cliWith({}, ...args);

/** The CLI given stdin (`input`) or variables of its own (`env`). */
function cliWith(given: { input?: string; env?: Record<string, string> }, ...args: string[]) {
  const run = spawnSync(process.execPath, [builtCli(), ...args], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_PATH: join(gw.dir, 'gateway.db'), RULES_DIR: EXAMPLE_RULES, ...given.env },
    input: given.input ?? '',
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { code: run.status, out: run.stdout, err: run.stderr };
}

const legacyPost = (key: string, body: unknown) =>
  fetch(`${base}/api/bots/api/leads/`, {
    method: 'POST',
    headers: { 'x-bot-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

// Each command is a child process (up to a second or two on busy cores): a test of several outlasts the default 20 s.
describe('lead-gateway CLI', { timeout: 90_000 }, () => {
  it('lists integrations as a table and as JSON', () => {
    const human = cli('integrations');
    expect(human.code).toBe(0);
    expect(human.out).toMatch(/^HANDLE\s+STATE\s+NAME\s+ID$/m);
    expect(human.out).toMatch(/^brightpath:telegram-bot\s+legacy\s+Admissions Telegram bot/m);
    const json = JSON.parse(cli('--json', 'integrations').out) as { items: { handle: string; state: string }[] };
    expect(json.items.map((i) => i.handle)).toContain('smile-dental:booking-form');
  });

  it('prints with --json what the admin API answers: snake_case members, every list as {"items": [...]}', async () => {
    const handle = 'smile-dental:booking-form';
    expect(cli('issue-key', handle, '--reason', 'conventions').code).toBe(0);
    for (const [args, path] of [
      [['integrations'], '/admin/v1/integrations'],
      [['keys', handle], `/admin/v1/integrations/${handle}/keys`],
      [['audit', handle], `/admin/v1/integrations/${handle}/audit`],
    ] as const) {
      const printed = JSON.parse(cli('--json', ...args).out) as { items: unknown[] };
      expect(Object.keys(printed)).toEqual(['items']);
      expect(printed).toEqual((await gw.admin('GET', path)).json());
    }
    const audit = JSON.parse(cli('--json', 'audit', handle).out) as { items: Record<string, unknown>[] };
    expect(audit.items[0]).toMatchObject({
      integration_id: expect.any(String),
      action: 'v1_key_issued',
      from_state: 'legacy',
      to_state: 'migrating',
      actor: expect.stringMatching(/^cli:/),
    });
    const snakeCase = (value: unknown): boolean =>
      Array.isArray(value)
        ? value.every(snakeCase)
        : value !== null && typeof value === 'object'
          ? Object.entries(value).every(([k, v]) => /^[a-z0-9_]+$/.test(k) && snakeCase(v))
          : true;
    for (const args of [['integrations'], ['keys', handle], ['audit'], ['report', handle]])
      expect(snakeCase(JSON.parse(cli('--json', ...args).out))).toBe(true);
  });

  it('issues a v1 test key the running gateway takes at once, in test mode: answered as live, kept nowhere', async () => {
    const handle = 'brightpath:telegram-bot';
    const issued = cli('issue-test-key', handle, '--reason', 'bot author tries v1');
    expect(issued.code).toBe(0);
    const key = /^\s+(lgtest_\S+)$/m.exec(issued.out)?.[1];
    expect(key).toBeDefined();
    gw.secrets.add(key!);
    const listed = JSON.parse(cli('--json', 'keys', handle).out) as { items: { kind: string; prefix: string }[] };
    expect(listed.items).toContainEqual(expect.objectContaining({ kind: 'test', prefix: key!.slice(0, 12) }));
    const leads = await gw.inspect.leads.count();
    const res = await fetch(`${base}/api/integrations/v1/leads/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ event_id: 'cli-test-1', first_name: 'Gulnora' }),
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('lead-gateway-test-mode')).toBe('true');
    expect(await gw.inspect.leads.count()).toBe(leads);
  });

  it('drives a migration the running gateway obeys at once', async () => {
    const handle = 'brightpath:website-form';
    expect(
      cliWith({ input: 'web-form-legacy-key-1\n' }, 'import-key', handle, '--key', '--reason', 'onboarding').code,
    ).toBe(0);
    expect((await legacyPost('web-form-legacy-key-1', { first_name: 'Dilshod' })).status).toBe(201);

    const issued = cli('--json', 'issue-key', handle);
    expect(issued.code).toBe(0);
    const { key, state } = JSON.parse(issued.out) as { key: string; state: string };
    expect(state).toBe('migrating');
    const v1 = await fetch(`${base}/api/integrations/v1/leads/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ event_id: 'cli-1', first_name: 'Dilshod' }),
    });
    expect(v1.status).toBe(201);

    await gw.admin('GET', '/admin/v1/integrations/brightpath:website-form/report'); // flushes the server's counters
    const refused = cli('switch-off', handle, '--reason', 'done');
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/within the 24 h quiet period/);

    expect(cli('switch-off', handle, '--reason', 'owner confirmed', '--force').code).toBe(0);
    expect((await legacyPost('web-form-legacy-key-1', { first_name: 'Late' })).status).toBe(403);

    const report = JSON.parse(cli('--json', 'report', handle).out) as {
      state: string;
      legacy: { calls_24h: number };
      readiness: { verdict: string };
    };
    expect(report).toMatchObject({ state: 'switched_off', readiness: { verdict: 'switched_off' } });
    expect(report.legacy.calls_24h).toBeGreaterThanOrEqual(1);

    expect(cli('rollback', handle, '--reason', 'bot not ready').code).toBe(0);
    expect((await legacyPost('web-form-legacy-key-1', { first_name: 'Again' })).status).toBe(201);

    const renewed = cli('renew', handle, '--reason', 'key leaked');
    expect(renewed.code).toBe(0);
    expect(renewed.out).toMatch(/Revoked 2 key\(s\)/);
    expect((await legacyPost('web-form-legacy-key-1', { first_name: 'Stopped' })).status).toBe(401);

    const audit = cli('audit', handle);
    expect(audit.out).toMatch(/v1_key_issued\s+legacy -> migrating\s+cli:\S+/);
    expect(audit.out).toMatch(/switched_off_forced\s+migrating -> switched_off\s+cli:\S+\s+owner confirmed/);
    const keys = cli('keys', handle);
    expect(keys.out).not.toContain(key);
    // The imported key is short: its prefix shows nothing of it (keys.ts legacyKeyPrefix).
    expect(keys.out).toMatch(/^[0-9a-f-]{36}\s+-\s+legacy/m);
  });

  it('issues named admin tokens whose operator the audit log names, lists them, and revokes them at once', async () => {
    const created = cli('--json', 'admin-token', 'create', 'dilnoza');
    expect(created.code).toBe(0);
    const { token } = JSON.parse(created.out) as { token: string };
    gw.secrets.add(token);
    expect(token).toMatch(/^lgadm_/);
    const asDilnoza = (path: string, body?: object) =>
      fetch(`${base}/admin/v1${path}`, {
        method: body ? 'POST' : 'GET',
        headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
    expect((await asDilnoza('/integrations/smile-dental:booking-form/keys', { reason: 'clinic starts' })).status).toBe(
      201,
    );
    const audit = (await (await asDilnoza('/integrations/smile-dental:booking-form/audit')).json()) as {
      items: { actor: string; reason: string }[];
    };
    expect(audit.items[0]).toMatchObject({ actor: 'dilnoza', reason: 'clinic starts' });

    const listed = cli('admin-token', 'list');
    expect(listed.out).toMatch(/^dilnoza\s+lgadm_\S+\s+\S+\s+cli:\S+\s+-$/m);
    expect(listed.out).not.toContain(token);
    for (const taken of ['automation', 'startup', 'demo-mode'])
      expect(cli('admin-token', 'create', taken).code).toBe(1);
    expect(cli('admin-token', 'revoke', 'dilnoza').code).toBe(0);
    expect((await asDilnoza('/integrations')).status).toBe(401);
    expect(cli('admin-token', 'revoke', 'dilnoza').code).toBe(1);
  });

  it('import-key takes the key from LEAD_GATEWAY_IMPORT_KEY or stdin, never from the command line', async () => {
    const handle = 'smile-dental:booking-form';
    // The key on the command line would land in the shell history and in ps: refused, nothing imported.
    const asArgument = cli('import-key', handle, '--key', 'booking-legacy-key-1');
    expect(asArgument.code).toBe(2);
    expect(asArgument.err).toMatch(
      /^error: --key takes no value: a key on the command line lands in the shell history and in ps/m,
    );
    expect((await legacyPost('booking-legacy-key-1', { first_name: 'Dilshod' })).status).toBe(401);
    expect(
      cliWith({ env: { LEAD_GATEWAY_IMPORT_KEY: 'booking-legacy-key-1' } }, 'import-key', handle, '--key').code,
    ).toBe(0);
    expect((await legacyPost('booking-legacy-key-1', { first_name: 'Dilshod' })).status).not.toBe(401);
  });

  it('refuses with exit 1 and a clear message: unknown integration, a state move not allowed', () => {
    const unknown = cli('issue-key', 'brightpath:nope');
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(/No integration "brightpath:nope".*known: brightpath:telegram-bot/);
    const move = cli('rollback', 'smile-dental:booking-form', '--reason', 'x');
    expect(move.code).toBe(1);
    expect(move.err).toMatch(/only a switched-off integration can be rolled back/);
  });

  it('answers usage errors with exit 2 and help', () => {
    const missing = cli('switch-off', 'brightpath:telegram-bot');
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/required option '--reason <text>'/);
    expect(cli('import-key', 'brightpath:telegram-bot').code).toBe(2);
    expect(cli('frobnicate').code).toBe(2);
    const help = cli('--help');
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/switch-off \[options\] <integration>/);
  });

  it('names a broken rules folder with exit 3', () => {
    const run = spawnSync(process.execPath, [builtCli(), 'integrations'], {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_PATH: join(gw.dir, 'gateway.db'),
        RULES_DIR: join(ROOT, 'test', 'fixtures', 'rules-broken-reference'),
      },
      encoding: 'utf8',
    });
    expect(run.status).toBe(3);
    expect(run.stderr).toMatch(/school\.yaml: integrations\[0\]\.lead_defaults\.stage/);
  });

  it('refuses a reason with a line break or an escape sequence (exit 2); a stored one is printed escaped, never as a row', async () => {
    const handle = 'brightpath:website-form';
    for (const reason of ['fine\n2026-01-01T00:00:00.000Z  x  forged', 'red \u001b[31m']) {
      const refused = cli('rollback', handle, '--reason', reason);
      expect(refused.code).toBe(2);
      expect(refused.err).toContain('must not hold control characters');
    }
    // A row stored before the rule, or written another way: the table shows its escapes.
    const integration = gw.rules.current().findIntegration(handle)!;
    const forged =
      'ok\n2026-01-01T00:00:00.000Z  brightpath:website-form  forged_action  legacy -> migrating  boss  \u001b[2J';
    await gw.store.transact((tx) =>
      tx.states.addAudit({
        id: newId(),
        integrationId: integration.id,
        action: 'note',
        fromState: null,
        toState: null,
        actor: 'test',
        reason: forged,
        details: null,
        at: new Date().toISOString(),
      }),
    );
    const audit = cli('audit', handle);
    expect(audit.code).toBe(0);
    expect(audit.out).not.toContain('\u001b');
    expect(audit.out.split('\n').filter((line) => line.includes('forged_action'))).toEqual([
      expect.stringContaining('ok\\n2026-01-01T00:00:00.000Z'),
    ]);
    expect(audit.out).toContain('\\u001b[2J');
  });
});
