// A forwarded legacy read as the bot and the service team see it: the answer with every header the
// gateway adds, the request's log line, its metrics and its count in the migration report.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { createLogger } from '../../src/logging.js';
import { createRulesHolder } from '../../src/rules/loader.js';
import { openTestStore } from '../support/store.js';
import { ADMIN_TOKEN, EXAMPLE_RULES, recordForContract } from '../helper.js';

const KEY = 'pass-through-seen-legacy-key-0123';
const HANDLE = 'brightpath:telegram-bot';
const PATH = '/api/bots/api/employees/';
/** Not a route of its own: the legacy prefix's wildcard forwards it. */
const ROUTE = '/api/bots/api/*';
const PER_MINUTE = 50;
const EMPLOYEES = JSON.stringify([{ id: 'emp-1', username: 'employee1' }]);

const upstreamSaw: IncomingMessage['headers'][] = [];
let upstream: Server;
const lines: string[] = [];
const rules = createRulesHolder(EXAMPLE_RULES);
let app: FastifyInstance;
let base: string;

beforeAll(async () => {
  upstream = createServer((req, res) => {
    upstreamSaw.push(req.headers);
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'x-upstream': 'old-crm' });
    res.end(EMPLOYEES);
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-pass-seen-'));
  app = await buildApp(
    {
      adminToken: ADMIN_TOKEN,
      rateLimitPerMinute: PER_MINUTE,
      upstream: {
        url: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`,
        connectTimeoutMs: 2_000,
        timeoutMs: 2_000,
      },
    },
    { store: await openTestStore(dir, 'g.db'), rules, logger: createLogger('info', sink) },
  );
  recordForContract(app, { upstream: true });
  base = await app.listen({ port: 0, host: '127.0.0.1' });
  const imported = await admin('POST', `/admin/v1/integrations/${HANDLE}/keys/import`, { key: KEY });
  expect(imported.statusCode).toBe(201);
});
afterAll(async () => {
  await app.close();
  upstream.closeAllConnections();
  await new Promise((resolve) => upstream.close(resolve));
});

const admin = (method: 'GET' | 'POST', url: string, payload?: object) =>
  app.inject({ method, url, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, ...(payload ? { payload } : {}) });

async function read(headers: Record<string, string> = {}) {
  const res = await fetch(`${base}${PATH}?page=2`, { headers: { 'x-bot-api-key': KEY, ...headers } });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

async function series(): Promise<Map<string, number>> {
  const res = await app.inject({ method: 'GET', url: '/metrics' });
  return new Map(
    res.body
      .split('\n')
      .filter((l) => l.startsWith('lead_gateway_'))
      .map((l) => [l.slice(0, l.lastIndexOf(' ')), Number(l.slice(l.lastIndexOf(' ') + 1))]),
  );
}

describe('a forwarded legacy read', () => {
  it("answers the upstream's status and body with the deprecation, sunset, link, rate-limit and request id headers", async () => {
    const sunset = [...rules.current().integrations.values()].find((i) => i.handle === HANDLE)!.legacy.sunset!;
    const first = await read();
    expect(first.status).toBe(200);
    expect(first.text).toBe(EMPLOYEES);
    expect(first.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(first.headers.get('x-upstream')).toBe('old-crm');
    expect(first.headers.get('deprecation')).toBe('@1767225600');
    expect(first.headers.get('link')).toBe('</docs/migration>; rel="deprecation"; type="text/html"');
    expect(first.headers.get('sunset')).toBe(new Date(`${sunset}T00:00:00Z`).toUTCString());
    expect(first.headers.get('ratelimit-limit')).toBe(String(PER_MINUTE));
    const remaining = Number(first.headers.get('ratelimit-remaining'));
    expect(Number(first.headers.get('ratelimit-reset'))).toBeGreaterThan(0);
    expect(Number(first.headers.get('ratelimit-reset'))).toBeLessThanOrEqual(60);
    expect(first.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(upstreamSaw.at(-1)!['x-request-id']).toBe(first.headers.get('x-request-id'));

    const second = await read({ 'x-request-id': 'bot-chosen-id-1' });
    expect(Number(second.headers.get('ratelimit-remaining'))).toBe(remaining - 1);
    expect(second.headers.get('x-request-id')).toBe('bot-chosen-id-1');
    expect(upstreamSaw.at(-1)!['x-request-id']).toBe('bot-chosen-id-1');
    expect(upstreamSaw.at(-1)!['x-bot-api-key']).toBe(KEY);
  });

  it('writes one log line: request id, route, method, status, integration and duration, nothing else', async () => {
    lines.length = 0;
    const res = await read({ 'x-request-id': 'bot-chosen-id-2' });
    const mine = lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((e) => e.request_id === 'bot-chosen-id-2');
    expect(mine).toHaveLength(1);
    expect(Object.keys(mine[0]!).sort()).toEqual([
      'duration_ms',
      'hostname',
      'integration',
      'level',
      'method',
      'msg',
      'pid',
      'request_id',
      'route',
      'status',
      'time',
    ]);
    expect(mine[0]).toMatchObject({
      level: 30,
      msg: 'request completed',
      route: ROUTE,
      method: 'GET',
      status: res.status,
      integration: HANDLE,
      duration_ms: expect.any(Number),
    });
  });

  it('counts the request, its duration, the legacy call and the upstream answer in the metrics', async () => {
    const before = await series();
    await read();
    const after = await series();
    const moved = (name: string) => (after.get(name) ?? 0) - (before.get(name) ?? 0);
    expect(moved(`lead_gateway_http_requests_total{method="GET",route="${ROUTE}",status="200"}`)).toBe(1);
    expect(moved(`lead_gateway_http_request_duration_seconds_count{method="GET",route="${ROUTE}"}`)).toBe(1);
    expect(moved(`lead_gateway_legacy_calls_total{integration="${HANDLE}",route="GET ${ROUTE}"}`)).toBe(1);
    expect(moved('lead_gateway_upstream_duration_seconds_count{status="200"}')).toBe(1);
    expect(moved(`lead_gateway_http_request_duration_seconds_sum{method="GET",route="${ROUTE}"}`)).toBeGreaterThan(0);
    expect(moved('lead_gateway_upstream_duration_seconds_sum{status="200"}')).toBeGreaterThan(0);
  });

  it('counts every call, once, for the migration report', async () => {
    const calls = async () => {
      const report = (await admin('GET', `/admin/v1/integrations/${HANDLE}/report`)).json<{
        legacy: { routes: { route: string; calls_24h: number; successful_7d: number }[] };
      }>();
      return report.legacy.routes.find((r) => r.route === `GET ${ROUTE}`) ?? { calls_24h: 0, successful_7d: 0 };
    };
    const before = await calls();
    for (let i = 0; i < 3; i++) expect((await read()).status).toBe(200);
    const after = await calls();
    expect(after.calls_24h - before.calls_24h).toBe(3);
    expect(after.successful_7d - before.successful_7d).toBe(3);
  });
});
