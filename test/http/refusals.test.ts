// What Node and Fastify refuse before a route runs is an RFC 9457 problem too, over real HTTP:
// bad percent-encoding, oversized or malformed requests, paths outside the static folders, requests
// during shutdown, and any method on any route.
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../helper.js';
import { openRaw, parseResponse, rawRequest, type RawResponse } from '../support/raw-http.js';

let gw: Gateway;
let port: number;

beforeAll(async () => {
  gw = await startGateway();
  port = Number(new URL(await gw.app.listen({ port: 0, host: '127.0.0.1' })).port);
});
afterAll(() => gw.close());

const logLines = (g: Gateway = gw): Record<string, unknown>[] =>
  readFileSync(join(g.dir, 'gateway.log'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);

const get = (path: string, extra = '') => `GET ${path} HTTP/1.1\r\nHost: gateway\r\nConnection: close\r\n${extra}\r\n`;

function expectProblem(res: RawResponse, status: number, code?: string, head = false) {
  expect(res.status, res.raw.slice(0, 300)).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.headers['x-request-id']).toMatch(/^[A-Za-z0-9._:-]+$/);
  if (head) return null;
  const problem = JSON.parse(res.body) as { code: string; status: number; type: string; request_id: string };
  expect(problem).toMatchObject({ status, type: `urn:lead-gateway:problem:${problem.code}` });
  if (code) expect(problem.code).toBe(code);
  expect(problem.request_id).toBe(res.headers['x-request-id']);
  return problem;
}

describe('refusals before routing', () => {
  it('400 problem for bad percent-encoding in the URL (regression: Fastify answered its own JSON)', async () => {
    const res = await rawRequest(port, get('/api/integrations/v1/leads/%E0%A4%A', 'X-Request-Id: bad-url-1\r\n'));
    const problem = expectProblem(res, 400, 'bad-request');
    expect(problem!.request_id).toBe('bad-url-1');
    const post = await rawRequest(
      port,
      'POST /api/bots/api/leads/%ZZ/ HTTP/1.1\r\nHost: gateway\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}',
    );
    expectProblem(post, 400, 'bad-request');
  });

  it('400 problem for a path parameter over 100 characters', async () => {
    expectProblem(await rawRequest(port, get(`/admin/v1/leads/${'a'.repeat(150)}`)), 400, 'bad-request');
  });

  it('431 problem with Connection: close for request headers over 16 KiB, and a warn line', async () => {
    const res = await rawRequest(
      port,
      get('/healthz', `X-Request-Id: big-headers-1\r\nX-Padding: ${'a'.repeat(20_000)}\r\n`),
    );
    expectProblem(res, 431, 'headers-too-large');
    expect(res.headers.connection).toBe('close');
    expect(logLines()).toContainEqual(
      expect.objectContaining({
        level: 40,
        msg: 'client refused',
        reason: 'headers-too-large',
        remote_address: '127.0.0.1',
      }),
    );
  });

  it('400 problem for requests Node cannot parse', async () => {
    const malformed = [
      'FOO / HTTP/1.1\r\nHost: gateway\r\n\r\n',
      'GET / HTTP/1.1\r\nHo st: gateway\r\n\r\n',
      'POST /api/integrations/v1/leads/ HTTP/1.1\r\nHost: gateway\r\nContent-Length: abc\r\n\r\n',
      'POST /api/integrations/v1/leads/ HTTP/1.1\r\nHost: gateway\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}',
      'GET / HTTP/9.9\r\nHost: gateway\r\n\r\n',
      'GET /healthz HTTP/1.1\r\nHost: gateway\r\nX-Bad: a\u0000b\r\n\r\n',
    ];
    for (const request of malformed) {
      const res = await rawRequest(port, request);
      expect(res.headers.connection, request).toBe('close');
      expectProblem(res, 400, 'bad-request');
    }
    expect(logLines()).toContainEqual(
      expect.objectContaining({
        level: 40,
        msg: 'client refused',
        reason: 'malformed-request',
        error_code: 'HPE_INVALID_METHOD',
      }),
    );
  });
});

describe('paths outside the static folders', () => {
  const probes = [
    '/docs/static/..%2f..%2fpackage.json',
    '/docs/%2e%2e/%2e%2e/etc/passwd',
    '/docs/api/static/..%2f..%2fpackage.json',
    '/docs/api/static/%2e%2e/%2e%2e/package.json',
    '/docs/api/static/%2e%2e%2f%2e%2e%2fpackage.json',
    '/docs/api/static/..%5c..%5cpackage.json',
    '/docs/api/static/..',
    '/docs/api/static/%00',
    '/docs/api/static/index.css%00.js',
    '/docs/api/static/.hidden',
    '/docs/api/static/',
    `/docs/api/static/${'a'.repeat(300)}`,
    '/docs/api/static/%E0%A4%A',
  ];

  it('answer a 404 (or 400) problem, never a 500, and log no error (regression: @fastify/static forbidden paths were 500s)', async () => {
    const before = logLines().length;
    for (const path of probes) {
      const res = await rawRequest(port, get(path));
      expect([400, 403, 404], `${path}: ${res.status}`).toContain(res.status);
      expectProblem(res, res.status);
    }
    expect(
      logLines()
        .slice(before)
        .filter((l) => Number(l.level) >= 50),
    ).toEqual([]);
    // The folder still serves its own files.
    expect((await rawRequest(port, get('/docs/api/static/swagger-ui.css'))).status).toBe(200);
  });
});

describe('methods', () => {
  it('any method on any route answers 2xx or a problem, never another body', async () => {
    const doc = JSON.parse((await rawRequest(port, get('/openapi.json'))).body) as { paths: Record<string, unknown> };
    const paths = [
      ...Object.keys(doc.paths).map((p) => p.replace(/\{[^}]+\}/g, 'x')),
      '/openapi.json',
      '/docs/api/',
      '/docs/api/static/index.css',
      '/nowhere',
    ];
    expect(paths.length).toBeGreaterThan(20);
    for (const path of paths) {
      for (const method of ['HEAD', 'OPTIONS', 'TRACE', 'PROPFIND', 'SEARCH', 'PURGE', 'LOCK', 'PATCH']) {
        const res = await rawRequest(
          port,
          `${method} ${path} HTTP/1.1\r\nHost: gateway\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`,
        );
        if (method === 'HEAD' && res.status < 400) continue; // a GET route's headers, no body
        expectProblem(res, res.status, undefined, method === 'HEAD');
        expect(res.status, `${method} ${path}`).toBeGreaterThanOrEqual(400);
        if (method === 'HEAD') expect(res.body).toBe('');
      }
    }
  });

  it('CONNECT gets a 405 problem (regression: Node hung up without a word)', async () => {
    const res = await rawRequest(port, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    expectProblem(res, 405, 'method-not-allowed');
    expect(logLines()).toContainEqual(
      expect.objectContaining({ level: 40, msg: 'client refused', reason: 'connect-method' }),
    );
  });
});

/** Resolves once nothing listens on `port` any more (at most 10 s). */
async function refusesConnections(port: number): Promise<void> {
  for (let waited = 0; waited < 10_000; waited += 20) {
    const refused = await new Promise<boolean>((resolve) => {
      const probe = connect({ port, host: '127.0.0.1' });
      probe.once('connect', () => {
        probe.destroy();
        resolve(false);
      });
      probe.once('error', () => resolve(true));
    });
    if (refused) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`port ${port} still accepts connections after 10 s`);
}

describe('during shutdown', () => {
  it('a request arriving on an open connection gets a 503 problem with Retry-After and Connection: close (regression: Fastify answered its own JSON)', async () => {
    const closing = await startGateway();
    const closingPort = Number(new URL(await closing.app.listen({ port: 0, host: '127.0.0.1' })).port);
    // Headers begun but not finished: the connection is busy, so close() waits for it.
    const conn = await openRaw(
      closingPort,
      'GET /healthz HTTP/1.1\r\nHost: gateway\r\nX-Request-Id: during-close-1\r\n',
      10_000,
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    const closed = closing.close();
    // close() first copies the database for its secrets search (slow on PostgreSQL under load); the
    // gateway is closing once its port refuses new connections.
    await refusesConnections(closingPort);
    conn.socket.write('\r\n');
    const { raw, byServer } = await conn.closed;
    await closed;
    expect(byServer).toBe(true);
    const res = parseResponse(raw)!;
    const problem = expectProblem(res, 503, 'service-unavailable');
    expect(problem!.request_id).toBe('during-close-1');
    expect(res.headers['retry-after']).toBe('5');
    expect(res.headers.connection).toBe('close');
  });
});
