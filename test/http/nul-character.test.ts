// U+0000 is refused wherever a client's text enters, on both engines: PostgreSQL cannot store it
// (SQLite can), so without the refusal the same request was a 201 on one engine and a 500 on the other.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../src/app.js';
import { scanJson } from '../../src/http/json-body.js';
import { openStore } from '../../src/store/open-store.js';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.js';
import type { Store } from '../../src/store/store.js';
import { createRulesHolder } from '../../src/rules/loader.js';
import { ADMIN_TOKEN, EXAMPLE_RULES, recordForContract } from '../helper.js';
import { clusterOrSkip, freshDatabase, type TestPostgres } from '../support/postgres.js';
import { snapshot } from '../support/snapshot.js';
import { inspect } from '../support/inspect.js';
import { rawRequest } from '../support/raw-http.js';

describe('scanJson finds the escape of U+0000', () => {
  it('names the member whose value or key holds it, by JSON Pointer', () => {
    expect(scanJson('{"a":"x\\u0000"}').nulAt).toBe('/a');
    expect(scanJson('{"a":{"b":[1,"\\u0000"]}}').nulAt).toBe('/a/b/1');
    expect(scanJson('{"ok":"1","k\\u0000ey":1}').nulAt).toBe('/k\u0000ey');
    expect(scanJson('"\\u00000"').nulAt).toBe('');
    expect(scanJson('{"a":"\\\\\\u0000"}').nulAt).toBe('/a');
  });

  it('leaves alone an escaped backslash followed by u0000, and other escapes', () => {
    expect(scanJson('{"a":"\\\\u0000","b":"\\u0001\\u00a0"}').nulAt).toBeNull();
    expect(scanJson('{"a":"plain","b":[1,2,{"c":null}]}').nulAt).toBeNull();
    expect(scanJson(JSON.stringify({ text: 'C:\\u0000\\path', [`${'\\'.repeat(4)}u0000`]: 1 })).nulAt).toBeNull();
  });
});

const LEGACY_KEY = 'nul-character-legacy-key-0123456789';

/** An upstream legacy API that only records what reaches it. */
const forwarded: string[] = [];
let upstream: Server;
let upstreamUrl: string;

beforeAll(async () => {
  upstream = createServer((req, res) => {
    forwarded.push(`${req.method} ${req.url}`);
    req.resume();
    req.on('end', () =>
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end('{"count":0,"next":null,"previous":null,"results":[]}'),
    );
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
});
afterAll(async () => {
  upstream.closeAllConnections();
  await new Promise((resolve) => upstream.close(resolve));
});

const json = { 'content-type': 'application/json' };

/** The gateway on a fresh store of one engine, with a v1 key, a legacy key and one lead made by each. */
async function gatewayOn(store: Store, withUpstream: boolean) {
  const app = await buildApp(
    {
      adminToken: ADMIN_TOKEN,
      ...(withUpstream ? { upstream: { url: upstreamUrl, connectTimeoutMs: 500, timeoutMs: 1_000 } } : {}),
    },
    { store, rules: createRulesHolder(EXAMPLE_RULES) },
  );
  recordForContract(app, { upstream: withUpstream });
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const issued = await app.inject({
    method: 'POST',
    url: '/admin/v1/integrations/brightpath:telegram-bot/keys',
    headers: admin,
  });
  const v1 = { authorization: `Bearer ${issued.json<{ key: string }>().key}` };
  await app.inject({
    method: 'POST',
    url: '/admin/v1/integrations/brightpath:telegram-bot/keys/import',
    headers: admin,
    payload: { key: LEGACY_KEY },
  });
  const legacy = { 'x-bot-api-key': LEGACY_KEY };
  const lead = await app.inject({
    method: 'POST',
    url: '/api/integrations/v1/leads/',
    headers: v1,
    payload: { event_id: 'nul-seed', first_name: 'Seed', external_contact_id: 'telegram:1' },
  });
  expect(lead.statusCode).toBe(201);
  const legacyLead = await app.inject({
    method: 'POST',
    url: '/api/bots/api/leads/',
    headers: legacy,
    payload: { first_name: 'Old', phone: '+49 151 0000000' },
  });
  expect(legacyLead.statusCode).toBe(201);
  return {
    app,
    admin,
    v1,
    legacy,
    leadId: lead.json<{ lead: { id: string } }>().lead.id,
    legacyLeadId: legacyLead.json<{ id: string }>().id,
  };
}

function expectNulProblem(res: LightMyRequestResponse, path?: string): void {
  expect(res.statusCode, res.body).toBe(400);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const problem = res.json();
  expect(problem).toMatchObject({ type: 'urn:lead-gateway:problem:nul-character', code: 'nul-character', status: 400 });
  expect(problem.detail).toContain('U+0000');
  if (path !== undefined) expect(problem.errors).toEqual([{ path, message: 'holds the character U+0000' }]);
}

describe.each(['sqlite', 'postgres'] as const)('on %s', (engine) => {
  let cluster: TestPostgres | null = null;
  let gw: Awaited<ReturnType<typeof gatewayOn>> | null = null;
  let store: Store | null = null;

  beforeAll(async () => {
    if (engine === 'postgres') {
      cluster = await clusterOrSkip();
      if (!cluster) return;
      store = await openPostgresStore({ url: await freshDatabase(cluster.url), poolSize: 4 });
    } else store = await openStore({ engine: 'sqlite', path: ':memory:', synchronous: 'FULL' });
    gw = await gatewayOn(store!, false);
  }, 60_000);
  afterAll(async () => {
    await gw?.app.close(); // closes the store too
    await cluster?.stop();
  });

  /** The request answers the NUL problem and no row changes (the call counters apart, as for every refusal). */
  async function refusedUnchanged(
    ctx: TestContext,
    send: (g: NonNullable<typeof gw>) => Promise<LightMyRequestResponse>,
    path?: string,
  ) {
    if (!gw || !store) return ctx.skip();
    const before = await snapshot(store);
    expectNulProblem(await send(gw), path);
    expect(await snapshot(store)).toBe(before);
  }

  let sent = 0;
  const v1Lead = (extra: Record<string, unknown>) => (g: NonNullable<typeof gw>) =>
    g.app.inject({
      method: 'POST',
      url: '/api/integrations/v1/leads/',
      headers: g.v1,
      payload: { event_id: `nul-${++sent}`, first_name: 'Ann', external_contact_id: 'telegram:2', ...extra },
    });

  it('v1: a NUL in first_name', (ctx) => refusedUnchanged(ctx, v1Lead({ first_name: 'An\u0000n' }), '/first_name'));
  it('v1: a NUL in an answer value', (ctx) =>
    refusedUnchanged(ctx, v1Lead({ answers: { goal: 'job\u0000' } }), '/answers/goal'));
  it('v1: a NUL in an answer key', (ctx) =>
    refusedUnchanged(ctx, v1Lead({ answers: { laptop: 'yes', 'go\u0000al': 'job' } }), '/answers/go\u0000al'));
  it('v1: a NUL deep inside metadata', (ctx) =>
    refusedUnchanged(
      ctx,
      v1Lead({ metadata: { a: { b: [{ c: 'ok' }, { d: ['x', '\u0000'] }] } } }),
      '/metadata/a/b/1/d/1',
    ));
  it('v1 answers: a NUL in an answer value', (ctx) =>
    refusedUnchanged(
      ctx,
      (g) =>
        g.app.inject({
          method: 'POST',
          url: '/api/integrations/v1/leads/answers/',
          headers: g.v1,
          payload: { event_id: 'nul-answers', external_contact_id: 'telegram:1', answers: { goal: '\u0000' } },
        }),
      '/answers/goal',
    ));

  it('legacy: a NUL in a created lead', (ctx) =>
    refusedUnchanged(
      ctx,
      (g) =>
        g.app.inject({
          method: 'POST',
          url: '/api/bots/api/leads/',
          headers: g.legacy,
          payload: { first_name: 'Bob', extra_data: { note: 'a\u0000b' } },
        }),
      '/extra_data/note',
    ));
  it('legacy: a NUL in a comment', (ctx) =>
    refusedUnchanged(
      ctx,
      (g) =>
        g.app.inject({
          method: 'POST',
          url: `/api/bots/api/leads/${g.legacyLeadId}/comments/`,
          headers: g.legacy,
          payload: { text: '\u0000' },
        }),
      '/text',
    ));
  it('legacy: %00 in a path id', (ctx) =>
    refusedUnchanged(ctx, (g) =>
      g.app.inject({
        method: 'PUT',
        url: `/api/bots/api/leads/${g.legacyLeadId}%00/`,
        headers: g.legacy,
        payload: { first_name: 'New' },
      }),
    ));
  it('legacy: %00 in a query value', (ctx) =>
    refusedUnchanged(ctx, (g) =>
      g.app.inject({ method: 'GET', url: '/api/bots/api/leads/?search=a%00', headers: g.legacy }),
    ));

  const setField = (body: string) => (g: NonNullable<typeof gw>) =>
    g.app.inject({
      method: 'PUT',
      url: `/admin/v1/leads/${g.leadId}/fields/goal`,
      headers: { ...g.admin, ...json },
      payload: body,
    });
  it('admin: a NUL in a field value, or in who wrote it', async (ctx) => {
    await refusedUnchanged(
      ctx,
      setField('{"value":"job\\u0000","written_by":{"kind":"import","ref":"sheet"}}'),
      '/value',
    );
    await refusedUnchanged(
      ctx,
      setField('{"value":"job","written_by":{"kind":"import","ref":"sheet\\u0000"}}'),
      '/written_by/ref',
    );
  });
  it('admin: %00 in a query value and in a path', async (ctx) => {
    await refusedUnchanged(ctx, (g) =>
      g.app.inject({ method: 'GET', url: '/admin/v1/leads?workspace=brightpath&field=goal:%00', headers: g.admin }),
    );
    await refusedUnchanged(ctx, (g) =>
      g.app.inject({ method: 'GET', url: `/admin/v1/leads/${g.leadId}%00`, headers: g.admin }),
    );
  });

  it('is refused before authentication and routing', async (ctx) => {
    if (!gw) return ctx.skip();
    expectNulProblem(await gw.app.inject({ method: 'GET', url: '/api/bots/api/leads/1%00/' }));
    expectNulProblem(await gw.app.inject({ method: 'GET', url: '/no/such/path%00' }));
    // A body is read only once the key is known, as every body is: a wrong key stays a 401.
    const unknownKey = await gw.app.inject({
      method: 'POST',
      url: '/api/integrations/v1/leads/',
      headers: { authorization: 'Bearer not-a-key', ...json },
      payload: '{"first_name":"\\u0000"}',
    });
    expect(unknownKey.json()).toMatchObject({ status: 401, code: 'unauthorized' });
  });

  it('an unpaired surrogate in a value or a key is refused the same way, a paired one is stored', async (ctx) => {
    if (!gw || !store) return ctx.skip();
    for (const [body, path] of [
      [{ first_name: 'A\ud800' }, '/first_name'],
      [{ metadata: { deep: ['ok', { x: '\udc00y' }] } }, '/metadata/deep/1/x'],
      [{ answers: { ['go\udbffal']: 'job' } }, undefined],
    ] as const) {
      const before = await snapshot(store);
      const res = await v1Lead(body)(gw);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 'unpaired-surrogate', status: 400 });
      if (path) expect(res.json().errors).toEqual([{ path, message: 'holds an unpaired surrogate' }]);
      expect(await snapshot(store)).toBe(before);
    }
    expect((await v1Lead({ first_name: 'Smile \ud83d\ude00' })(gw)).statusCode).toBe(201);
  });

  it('a backslash before u0000 is ordinary text, stored and read back as sent', async (ctx) => {
    if (!gw || !store) return ctx.skip();
    const res = await gw.app.inject({
      method: 'POST',
      url: '/api/integrations/v1/leads/',
      headers: { ...gw.v1, ...json },
      payload: '{"event_id":"nul-lookalike","first_name":"A\\\\u0000B","external_contact_id":"telegram:3"}',
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(
      await inspect(store).leads.list({ id: res.json<{ lead: { id: string } }>().lead.id }, ['firstName']),
    ).toEqual([{ firstName: 'A\\u0000B' }]);
  });
});

describe('over real HTTP, and towards the upstream legacy API', () => {
  let app: FastifyInstance;
  let port: number;
  let legacy: Record<string, string>;

  beforeAll(async () => {
    const gw = await gatewayOn(await openStore({ engine: 'sqlite', path: ':memory:', synchronous: 'FULL' }), true);
    app = gw.app;
    legacy = gw.legacy;
    await app.listen({ port: 0, host: '127.0.0.1' });
    port = (app.server.address() as AddressInfo).port;
  });
  afterAll(() => app.close());

  it('a refused request is not forwarded: %00 in the query or the path, or a NUL in the body', async () => {
    expectNulProblem(await app.inject({ method: 'GET', url: '/api/bots/api/leads/?search=%00', headers: legacy }));
    expectNulProblem(await app.inject({ method: 'GET', url: '/api/bots/api/leads/1%00/comments/', headers: legacy }));
    expectNulProblem(
      await app.inject({
        method: 'POST',
        url: '/api/bots/api/leads/1/comments/',
        headers: legacy,
        payload: { text: 'a\u0000' },
      }),
      '/text',
    );
    expect(forwarded).toEqual([]);
    // The same requests without the NUL do reach it.
    expect(
      (await app.inject({ method: 'GET', url: '/api/bots/api/leads/?search=a', headers: legacy })).statusCode,
    ).toBe(200);
    expect(forwarded).toEqual(['GET /api/bots/api/leads/?search=a']);
  });

  it('a raw NUL in the request line or a header value is refused by Node, with a problem', async () => {
    for (const request of [
      'GET /api/bots/api/leads/1\u0000/ HTTP/1.1\r\nHost: x\r\n\r\n',
      `POST /api/bots/api/leads/ HTTP/1.1\r\nHost: x\r\nX-Bot-API-Key: ${LEGACY_KEY}\r\nIdempotency-Key: a\u0000b\r\nContent-Length: 2\r\n\r\n{}`,
    ]) {
      const res = await rawRequest(port, request);
      expect(res.status).toBe(400);
      expect(JSON.parse(res.body)).toMatchObject({ code: 'bad-request', detail: 'The request is not valid HTTP/1.1.' });
    }
  });

  it('%00 in the URL over real HTTP', async () => {
    const res = await rawRequest(
      port,
      'GET /api/bots/api/leads/?search=%00 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    );
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({ code: 'nul-character', instance: '/api/bots/api/leads/' });
  });
});
