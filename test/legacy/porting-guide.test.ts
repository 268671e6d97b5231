// GET /api/bots/api/porting-guide/: the bot author reads its own guide with the legacy key; the read is
// the gateway's own (never forwarded, not counted as a legacy call) and stays behind the legacy gate.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { openTestStore } from '../support/store.js';
import { createRulesHolder } from '../../src/rules/loader.js';
import { ADMIN_TOKEN, EXAMPLE_RULES, recordForContract, startGateway, type Gateway } from '../helper.js';
import type { PortingGuide } from '../../src/porting/guide.js';

const BOT = 'brightpath:telegram-bot';
const OTHER = 'brightpath:website-form';
const KEY = 'porting-guide-legacy-key-bot';
const OTHER_KEY = 'porting-guide-legacy-key-form';
const GUIDE = '/api/bots/api/porting-guide/';

describe('the porting guide under the legacy prefix', () => {
  let gw: Gateway;
  beforeAll(async () => {
    gw = await startGateway();
    for (const [handle, key] of [
      [BOT, KEY],
      [OTHER, OTHER_KEY],
    ] as const) {
      gw.secrets.add(key);
      expect((await gw.admin('POST', `/admin/v1/integrations/${handle}/keys/import`, { key })).statusCode).toBe(201);
    }
  });
  afterAll(() => gw.close());

  const read = (key: string, url = GUIDE, headers: Record<string, string> = {}) =>
    gw.app.inject({ method: 'GET', url, headers: { 'x-bot-api-key': key, ...headers } });
  const legacyUsage = async (handle: string) =>
    (await gw.admin('GET', `/admin/v1/integrations/${handle}/report`)).json<{
      legacy: { calls_7d: number; last_seen: string | null };
    }>().legacy;

  it("answers the key's own integration's guide, with the sunset as the fix-by date and the deprecation headers", async () => {
    expect(
      (
        await gw.app.inject({
          method: 'POST',
          url: '/api/bots/api/tags/create/',
          headers: { 'x-bot-api-key': KEY },
          payload: { name: 'Laptop bor' },
        })
      ).statusCode,
    ).toBe(201);
    const res = await read(KEY);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers.deprecation).toMatch(/^@\d+$/);
    expect(res.headers.sunset).toBe(new Date('2027-03-01T00:00:00Z').toUTCString());
    const guide = res.json<PortingGuide>();
    expect(guide).toMatchObject({ integration: { handle: BOT }, fix_by: '2027-03-01' });
    expect(guide.not_needed).toContainEqual({ route: 'POST /api/bots/api/tags/create/', calls_30d: 1 });

    // Another integration's key reads that integration's guide, never this one's.
    const other = (await read(OTHER_KEY)).json<PortingGuide>();
    expect(other).toMatchObject({ integration: { handle: OTHER }, routes: [], not_needed: [] });
  });

  it('answers Markdown for format=markdown or Accept: text/markdown', async () => {
    for (const res of [
      await read(KEY, `${GUIDE}?format=markdown`),
      await read(KEY, GUIDE, { accept: 'text/markdown' }),
    ]) {
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('text/markdown; charset=utf-8');
      expect(res.body).toContain(`(${BOT})`);
    }
    expect((await read(KEY, `${GUIDE}?format=html`)).statusCode).toBe(422);
  });

  it('is not counted as a legacy call: the report and its last call are unchanged, and the guide lists no such route', async () => {
    const before = await legacyUsage(BOT);
    for (let i = 0; i < 3; i++) expect((await read(KEY)).statusCode).toBe(200);
    expect(await legacyUsage(BOT)).toEqual(before);
    const guide = (await read(KEY)).json<PortingGuide>();
    expect([...guide.routes, ...guide.not_needed, ...guide.not_available].map((r) => r.route)).not.toContain(
      `GET ${GUIDE}`,
    );
  });

  it('refuses a bad key with 401, and a switched-off key with 403', async () => {
    expect((await read('porting-guide-no-such-key')).statusCode).toBe(401);
    await gw.issueKey(OTHER);
    expect(
      (await gw.admin('POST', `/admin/v1/integrations/${OTHER}/switch-off`, { reason: 'moved', force: true }))
        .statusCode,
    ).toBe(200);
    const res = await read(OTHER_KEY);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ status: 403, detail: expect.stringContaining('switched off') });
  });
});

describe('the porting guide with an upstream legacy API set', () => {
  let upstream: Server;
  const reached: string[] = [];
  let app: FastifyInstance;
  let dir: string;

  beforeAll(async () => {
    upstream = createServer((req, res) => {
      reached.push(`${req.method} ${req.url}`);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"from":"upstream"}');
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    dir = mkdtempSync(join(tmpdir(), 'lead-gateway-guide-'));
    const store = await openTestStore(dir, 'g.db');
    app = await buildApp(
      {
        adminToken: ADMIN_TOKEN,
        upstream: {
          url: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`,
          connectTimeoutMs: 500,
          timeoutMs: 400,
        },
      },
      { store, rules: createRulesHolder(EXAMPLE_RULES) },
    );
    recordForContract(app, { upstream: true });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const imported = await app.inject({
      method: 'POST',
      url: `/admin/v1/integrations/${BOT}/keys/import`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { key: KEY },
    });
    expect(imported.statusCode).toBe(201);
  });
  afterAll(async () => {
    await app.close();
    upstream.closeAllConnections();
    await new Promise((resolve) => upstream.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it('is served by the gateway itself: the upstream receives nothing', async () => {
    // The upstream is really there: a forwarded legacy read reaches it.
    expect(
      (await app.inject({ method: 'GET', url: '/api/bots/api/boards/', headers: { 'x-bot-api-key': KEY } })).json(),
    ).toEqual({ from: 'upstream' });
    reached.length = 0;
    for (const url of [GUIDE, `${GUIDE}?format=markdown`]) {
      const res = await app.inject({ method: 'GET', url, headers: { 'x-bot-api-key': KEY } });
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain(BOT);
    }
    expect(reached).toEqual([]);
  });
});
