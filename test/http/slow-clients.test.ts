// Slow and idle clients over real HTTP: each is cut off by the server within its configured time,
// answered with a problem while the socket can take one, and named in one warn line; a connection
// over the cap is refused.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConnectionLimits } from '../../src/config.js';
import { startGateway, type Gateway } from '../helper.js';
import { openRaw, parseResponse } from '../support/raw-http.js';

const limits: ConnectionLimits = {
  headersTimeoutMs: 600,
  requestTimeoutMs: 1_200,
  keepAliveTimeoutMs: 1_000,
  maxConnections: 1_000,
};
/** How long past its timeout a connection may stay before the test calls it held (Node checks every 60 ms here). */
const SLACK_MS = 2_000;

let gw: Gateway;
let port: number;
let key: string;

beforeAll(async () => {
  gw = await startGateway({ connections: limits });
  key = await gw.issueKey('brightpath:telegram-bot');
  port = Number(new URL(await gw.app.listen({ port: 0, host: '127.0.0.1' })).port);
});
afterAll(() => gw.close());

const logLines = (): Record<string, unknown>[] =>
  readFileSync(join(gw.dir, 'gateway.log'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
const refusals = (reason: string) =>
  logLines().filter((l) => l.msg === 'client refused' && l.reason === reason && l.level === 40);

const leadHeaders = (extra: string) =>
  `POST /api/integrations/v1/leads/ HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\nContent-Length: 10000\r\n${extra}\r\n`;

function expectTimeoutProblem(raw: string, requestId?: string) {
  const res = parseResponse(raw);
  expect(res, `the server wrote: ${JSON.stringify(raw)}`).not.toBeNull();
  expect(res!.status).toBe(408);
  expect(res!.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res!.headers.connection).toBe('close');
  const problem = JSON.parse(res!.body) as { code: string; status: number; request_id: string };
  expect(problem).toMatchObject({
    code: 'request-timeout',
    status: 408,
    type: 'urn:lead-gateway:problem:request-timeout',
  });
  expect(res!.headers['x-request-id']).toBe(problem.request_id);
  if (requestId) expect(problem.request_id).toBe(requestId);
  return problem;
}

describe('slow and idle clients', () => {
  it('an idle connection that never sends a byte is closed after the headers timeout', async () => {
    const conn = await openRaw(port, null, limits.headersTimeoutMs + SLACK_MS);
    const { raw, byServer } = await conn.closed;
    expect(byServer).toBe(true);
    const problem = expectTimeoutProblem(raw);
    expect(refusals('idle')).toContainEqual(
      expect.objectContaining({ request_id: problem.request_id, remote_address: '127.0.0.1' }),
    );
  });

  it('a client trickling its headers is closed after the headers timeout', async () => {
    const conn = await openRaw(
      port,
      'POST /api/integrations/v1/leads/ HTTP/1.1\r\nHost: gateway\r\n',
      limits.headersTimeoutMs + SLACK_MS,
    );
    conn.trickle('X-Slow: 1\r\n', 100);
    const { raw, byServer } = await conn.closed;
    expect(byServer).toBe(true);
    const problem = expectTimeoutProblem(raw);
    expect(refusals('headers-timeout')).toContainEqual(
      expect.objectContaining({ request_id: problem.request_id, remote_address: '127.0.0.1' }),
    );
  });

  it('a client with a valid key trickling its body is closed after the request timeout, its request id in the problem and the log', async () => {
    const conn = await openRaw(
      port,
      leadHeaders(`Authorization: Bearer ${key}\r\nX-Request-Id: slow-body-1\r\n`),
      limits.requestTimeoutMs + SLACK_MS,
    );
    conn.trickle(' ', 100);
    const { raw, byServer } = await conn.closed;
    expect(byServer).toBe(true);
    expectTimeoutProblem(raw, 'slow-body-1');
    expect(refusals('request-timeout')).toContainEqual(
      expect.objectContaining({ request_id: 'slow-body-1', remote_address: '127.0.0.1' }),
    );
  });

  it('a client with a valid key withholding its body is closed after the request timeout', async () => {
    const conn = await openRaw(
      port,
      leadHeaders(`Authorization: Bearer ${key}\r\nX-Request-Id: withheld-body-1\r\n`),
      limits.requestTimeoutMs + SLACK_MS,
    );
    const { raw, byServer } = await conn.closed;
    expect(byServer).toBe(true);
    expectTimeoutProblem(raw, 'withheld-body-1');
    expect(refusals('request-timeout')).toContainEqual(expect.objectContaining({ request_id: 'withheld-body-1' }));
  });

  it('a client without a key trickling its body gets its 401 at once, then is cut at the request timeout with no second answer', async () => {
    const conn = await openRaw(
      port,
      leadHeaders('X-Request-Id: slow-anonymous-1\r\n'),
      limits.requestTimeoutMs + SLACK_MS,
    );
    conn.trickle(' ', 100);
    const { raw, byServer } = await conn.closed;
    expect(byServer).toBe(true);
    const res = parseResponse(raw)!;
    expect(res.status).toBe(401);
    // The connection is kept while the body arrives (closing it early would reset it under a client
    // still writing, and the client would lose the 401): the request timeout ends it.
    expect(res.headers.connection).not.toBe('close');
    expect(raw.match(/HTTP\/1\.1 /g)).toHaveLength(1); // one response, no 408 after it
    expect(logLines()).toContainEqual(
      expect.objectContaining({ request_id: 'slow-anonymous-1', status: 401, msg: 'request completed' }),
    );
  });

  it('a request answered before its body arrived does not silence the 408 of the next one on the connection', async () => {
    const before = refusals('request-timeout').length;
    const conn = await openRaw(
      port,
      `POST /api/integrations/v1/leads/ HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\nContent-Length: 10\r\nX-Request-Id: early-1\r\n\r\n{"a":`,
      limits.requestTimeoutMs * 2 + SLACK_MS,
    );
    // The 401 comes once the headers are in, before the body is complete.
    await new Promise((resolve) => conn.socket.once('data', resolve));
    // The rest of the first body, then a second request that withholds its body.
    conn.socket.write(`1234}`);
    conn.socket.write(leadHeaders(`Authorization: Bearer ${key}\r\nX-Request-Id: withheld-2\r\n`));
    const { raw, byServer } = await conn.closed;
    expect(byServer).toBe(true);
    expect(raw.match(/HTTP\/1\.1 /g)).toHaveLength(2);
    expect(raw).toMatch(/^HTTP\/1\.1 401/);
    expect(raw.slice(raw.indexOf('HTTP/1.1', 10))).toMatch(/^HTTP\/1\.1 408/);
    expect(refusals('request-timeout').length).toBe(before + 1);
  });

  it('an idle kept-alive connection is closed after the keep-alive timeout', async () => {
    const conn = await openRaw(
      port,
      'GET /healthz HTTP/1.1\r\nHost: gateway\r\n\r\n',
      limits.keepAliveTimeoutMs + 1_000 + SLACK_MS,
    );
    const { raw, byServer } = await conn.closed;
    expect(byServer).toBe(true);
    const res = parseResponse(raw)!;
    expect(res.status).toBe(200);
    // Node advertises the timeout in seconds and closes one second after it (its own margin).
    expect(res.headers['keep-alive']).toBe('timeout=1');
  });
});

describe('the connection cap', () => {
  let capped: Gateway;
  let cappedPort: number;
  beforeAll(async () => {
    capped = await startGateway({
      connections: {
        headersTimeoutMs: 10_000,
        requestTimeoutMs: 10_000,
        keepAliveTimeoutMs: 10_000,
        maxConnections: 3,
      },
    });
    cappedPort = Number(new URL(await capped.app.listen({ port: 0, host: '127.0.0.1' })).port);
  });
  afterAll(() => capped.close());

  it('refuses a connection over MAX_CONNECTIONS and logs it, and serves again once one closes', async () => {
    const held = await Promise.all([1, 2, 3].map(() => openRaw(cappedPort, null, 15_000)));
    await expect.poll(() => new Promise((resolve) => capped.app.server.getConnections((_e, n) => resolve(n)))).toBe(3);
    const over = await openRaw(cappedPort, 'GET /healthz HTTP/1.1\r\nHost: gateway\r\n\r\n', 5_000);
    const refused = await over.closed;
    expect(refused).toMatchObject({ raw: '', byServer: true });
    const lines = readFileSync(join(capped.dir, 'gateway.log'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 40,
        msg: 'client refused',
        reason: 'connection-limit',
        remote_address: '127.0.0.1',
        max_connections: 3,
      }),
    );

    held[0]!.socket.destroy();
    await held[0]!.closed;
    await expect.poll(() => new Promise((resolve) => capped.app.server.getConnections((_e, n) => resolve(n)))).toBe(2);
    const again = await openRaw(
      cappedPort,
      'GET /healthz HTTP/1.1\r\nHost: gateway\r\nConnection: close\r\n\r\n',
      5_000,
    );
    expect(parseResponse((await again.closed).raw)?.status).toBe(200);
    for (const conn of held) conn.socket.destroy();
  });
});
