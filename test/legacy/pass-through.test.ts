// Pass-through to a real upstream HTTP server on 127.0.0.1: forwarded unchanged, failures bounded.
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { openTestStore } from '../support/store.js';
import { createRulesHolder } from '../../src/rules/loader.js';
import { ADMIN_TOKEN, EXAMPLE_RULES, recordForContract } from '../helper.js';
import { BUFFERED_ANSWER_MAX_BYTES } from '../../src/legacy/pass-through.js';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** The old API: records what reaches it; behaviour per test. */
let behave: (req: IncomingMessage, res: ServerResponse, body: string) => void;
const seen: Seen[] = [];
let upstream: Server;
let upstreamUrl: string;

let app: FastifyInstance;
let base: string;
const KEY = 'passthrough-bot-key-1';

beforeAll(async () => {
  upstream = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      behave(req, res, body);
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;

  const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-proxy-'));
  const store = await openTestStore(dir, 'g.db');
  app = await buildApp(
    { adminToken: ADMIN_TOKEN, upstream: { url: upstreamUrl, connectTimeoutMs: 500, timeoutMs: 400 } },
    { store, rules: createRulesHolder(EXAMPLE_RULES) },
  );
  recordForContract(app, { upstream: true });
  base = await app.listen({ port: 0, host: '127.0.0.1' });
  await admin('POST', '/admin/v1/integrations/brightpath:telegram-bot/keys/import', { key: KEY });
});
afterAll(async () => {
  await app.close();
  upstream.closeAllConnections();
  await new Promise((resolve) => upstream.close(resolve));
});
afterEach(() => {
  seen.length = 0;
});

async function admin(method: string, path: string, body?: unknown) {
  const res = await app.inject({
    method: method as 'POST',
    url: path,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    ...(body === undefined ? {} : { payload: body as object }),
  });
  return res.json();
}

async function bot(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const started = Date.now();
  const res = await fetch(`${base}/api/bots/api${path}`, {
    method,
    headers: {
      'x-bot-api-key': KEY,
      ...headers,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: () => JSON.parse(text), ms: Date.now() - started };
}

describe('forwarding', () => {
  it('passes method, path, query, body and the bot key on unchanged, and the answer back', async () => {
    behave = (_req, res) => {
      res.writeHead(201, { 'content-type': 'application/json', 'x-upstream': 'old-crm' });
      res.end(JSON.stringify({ id: 'c1', text: 'hello' }));
    };
    const res = await bot('POST', '/leads/42/comments/?notify=1', { text: 'hello' });
    expect(res.status).toBe(201);
    expect(res.json()).toEqual({ id: 'c1', text: 'hello' });
    expect(res.headers.get('x-upstream')).toBe('old-crm');
    // The gateway's own headers are still added to a forwarded answer (its hooks run for it).
    expect(res.headers.get('deprecation')).toMatch(/^@\d+$/);
    expect(res.headers.get('ratelimit-limit')).toMatch(/^\d+$/);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({
      method: 'POST',
      url: '/api/bots/api/leads/42/comments/?notify=1',
      body: '{"text":"hello"}',
    });
    expect(seen[0]!.headers['x-bot-api-key']).toBe(KEY);
    expect(seen[0]!.headers['x-request-id']).toBe(res.headers.get('x-request-id'));
  });

  it('forwards reads and unknown legacy paths; keeps translated writes on the gateway', async () => {
    behave = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('[]');
    };
    expect((await bot('GET', '/statuses/')).status).toBe(200);
    expect((await bot('GET', '/users/?page=2')).status).toBe(200);
    expect((await bot('DELETE', '/leads/42/')).status).toBe(200);
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual([
      'GET /api/bots/api/statuses/',
      'GET /api/bots/api/users/?page=2',
      'DELETE /api/bots/api/leads/42/',
    ]);
    seen.length = 0;
    expect((await bot('POST', '/leads/', { first_name: 'Local' })).status).toBe(201);
    expect((await bot('POST', '/tags/create/', { name: 'Local tag' })).status).toBe(201);
    expect(seen).toEqual([]);
  });

  it('drops hop-by-hop headers both ways', async () => {
    behave = (_req, res) => {
      res.writeHead(200, {
        'content-type': 'application/json',
        'x-private-hop': 'secret',
        connection: 'x-private-hop',
      });
      res.end('{}');
    };
    // node:http, because fetch itself refuses to send Keep-Alive.
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = httpRequest(`${base}/api/bots/api/info/`, {
        headers: {
          'x-bot-api-key': KEY,
          'keep-alive': 'timeout=5',
          'proxy-authorization': 'Basic abc',
          connection: 'x-client-hop',
          'x-client-hop': '1',
        },
      });
      req.on('response', (r) => {
        r.resume();
        r.on('end', () => resolve(r));
      });
      req.on('error', reject);
      req.end();
    });
    expect(res.statusCode).toBe(200);
    expect(seen[0]!.headers).not.toHaveProperty('proxy-authorization');
    expect(seen[0]!.headers).not.toHaveProperty('keep-alive');
    expect(seen[0]!.headers).not.toHaveProperty('x-client-hop');
    expect(res.headers['x-private-hop']).toBeUndefined();
  });
});

describe('an upstream that fails', () => {
  it('down (connection refused): 502 problem without the upstream error text', async () => {
    const dead = createServer();
    await new Promise<void>((resolve) => dead.listen(0, '127.0.0.1', resolve));
    const port = (dead.address() as AddressInfo).port;
    await new Promise((resolve) => dead.close(resolve));
    const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-proxy-'));
    const other = await buildApp(
      { adminToken: ADMIN_TOKEN, upstream: { url: `http://127.0.0.1:${port}`, connectTimeoutMs: 500, timeoutMs: 400 } },
      { store: await openTestStore(dir, 'g.db'), rules: createRulesHolder(EXAMPLE_RULES) },
    );
    recordForContract(other, { upstream: true });
    await other.inject({
      method: 'POST',
      url: '/admin/v1/integrations/brightpath:telegram-bot/keys/import',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { key: KEY },
    });
    const res = await other.inject({
      method: 'GET',
      url: '/api/bots/api/statuses/',
      headers: { 'x-bot-api-key': KEY },
    });
    expect(res.statusCode).toBe(502);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({ code: 'bad-gateway' });
    expect(res.body).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|connect/i);
    await other.close();
  });

  it('slow beyond the timeout: 504 problem, answered within the bound', async () => {
    behave = () => undefined; // never answers
    const res = await bot('GET', '/boards/');
    expect(res.status).toBe(504);
    expect(res.json()).toMatchObject({ code: 'gateway-timeout' });
    expect(res.ms).toBeLessThan(5_000);
  });

  it('resetting the connection: 502, and a POST is not re-sent by the gateway', async () => {
    behave = (req) => req.socket.destroy();
    const res = await bot('POST', '/leads/42/payments/', { amount: 100 });
    expect(res.status).toBe(502);
    expect(res.json()).toMatchObject({ code: 'bad-gateway' });
    expect(res.text).not.toMatch(/ECONNRESET|socket/i);
    expect(seen.filter((s) => s.method === 'POST')).toHaveLength(1);
    const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(/^lead_gateway_upstream_errors_total\{kind="unavailable"\} [1-9]/m);
    expect(metrics).toMatch(/^lead_gateway_upstream_errors_total\{kind="timeout"\} [1-9]/m);
  });

  it('a GET met by a reset is not re-sent either', async () => {
    behave = (req) => req.socket.destroy();
    expect((await bot('GET', '/leads/42/')).status).toBe(502);
    expect(seen.filter((s) => s.method === 'GET')).toHaveLength(1);
  });

  it('stalling in the middle of a small body: 504 problem (the answer is sent on only whole)', async () => {
    behave = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"partial":');
    };
    const res = await bot('GET', '/leads/');
    expect(res.status).toBe(504);
    expect(res.json()).toMatchObject({ code: 'gateway-timeout' });
    expect(res.text).not.toMatch(/partial/);
  });

  it('stalling in the middle of a large body: the streamed answer is cut off, never completed', async () => {
    behave = (_req, res) => {
      res.writeHead(200, {
        'content-type': 'application/octet-stream',
        'content-length': String(BUFFERED_ANSWER_MAX_BYTES + 1),
      });
      res.write('partial');
    };
    const res = await fetch(`${base}/api/bots/api/leads/`, { headers: { 'x-bot-api-key': KEY } });
    expect(res.status).toBe(200);
    await expect(res.text()).rejects.toThrow();
  });

  it('a GET that meets 503 is not retried either', async () => {
    behave = (_req, res) => {
      res.writeHead(503);
      res.end();
    };
    expect((await bot('GET', '/tags/')).status).toBe(503);
    expect(seen).toHaveLength(1);
  });
});

describe('streaming', () => {
  it('passes a large answer on as it comes, byte for byte', async () => {
    const chunk = Buffer.alloc(64 * 1024, 'a');
    const rest = Buffer.alloc(4 * 1024 * 1024, 'b');
    let finish!: () => void;
    behave = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.write(chunk);
      // The rest only once the client holds the first part: a buffering proxy would never deliver it.
      finish = () => res.end(rest);
    };
    const received = await new Promise<Buffer>((resolve, reject) => {
      const parts: Buffer[] = [];
      const req = httpRequest(`${base}/api/bots/api/info/`, { headers: { 'x-bot-api-key': KEY } }, (res) => {
        res.on('data', (part: Buffer) => {
          if (parts.length === 0) finish();
          parts.push(part);
        });
        res.on('end', () => resolve(Buffer.concat(parts)));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });
    expect(received.length).toBe(chunk.length + rest.length);
    expect(received.equals(Buffer.concat([chunk, rest]))).toBe(true);
  });
});

describe('a client that leaves', () => {
  // Timeouts far beyond the test's own: only the client's leaving can end the upstream request here.
  let patient: FastifyInstance;
  let patientBase: string;
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-proxy-'));
    patient = await buildApp(
      { adminToken: ADMIN_TOKEN, upstream: { url: upstreamUrl, connectTimeoutMs: 60_000, timeoutMs: 300_000 } },
      { store: await openTestStore(dir, 'g.db'), rules: createRulesHolder(EXAMPLE_RULES) },
    );
    recordForContract(patient, { upstream: true });
    patientBase = await patient.listen({ port: 0, host: '127.0.0.1' });
    await patient.inject({
      method: 'POST',
      url: '/admin/v1/integrations/brightpath:telegram-bot/keys/import',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { key: KEY },
    });
  });
  afterAll(async () => {
    await patient.close();
  });

  /** Resolves when the upstream sees its request's connection close. */
  function upstreamClosed(onRequest: (res: ServerResponse) => void): Promise<void> {
    return new Promise((resolve) => {
      behave = (req, res) => {
        req.socket.once('close', () => resolve());
        onRequest(res);
      };
    });
  }

  it('before the answer: the upstream request is cancelled', async () => {
    const closed = upstreamClosed(() => undefined);
    const req = httpRequest(`${patientBase}/api/bots/api/boards/`, { headers: { 'x-bot-api-key': KEY } });
    req.on('error', () => undefined);
    req.end();
    while (seen.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    req.destroy();
    await closed;
  });

  it('in the middle of a streamed answer: the upstream response is cancelled', async () => {
    const closed = upstreamClosed((res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.write(Buffer.alloc(1024, 'a'));
    });
    const req = httpRequest(`${patientBase}/api/bots/api/info/`, { headers: { 'x-bot-api-key': KEY } }, (res) =>
      res.once('data', () => req.destroy()),
    );
    req.on('error', () => undefined);
    req.end();
    await closed;
  });

  it('in the middle of a small answer held until whole: the upstream response is cancelled', async () => {
    let started!: () => void;
    const headersSent = new Promise<void>((resolve) => (started = resolve));
    const closed = upstreamClosed((res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"partial":', () => started());
    });
    const req = httpRequest(`${patientBase}/api/bots/api/info/`, { headers: { 'x-bot-api-key': KEY } });
    req.on('error', () => undefined);
    req.end();
    await headersSent;
    req.destroy();
    await closed;
  });

  it('HEAD: the upstream headers come back without a body, Content-Length kept', async () => {
    behave = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '42' });
      res.end();
    };
    const res = await fetch(`${patientBase}/api/bots/api/info/`, { method: 'HEAD', headers: { 'x-bot-api-key': KEY } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe('42');
    expect(await res.text()).toBe('');
  });
});

describe('after switch-off', () => {
  it('answers 403 on pass-through routes and forwards nothing; the calls are still counted', async () => {
    behave = (_req, res) => res.end('{}');
    await admin('POST', '/admin/v1/integrations/brightpath:telegram-bot/keys');
    await admin('POST', '/admin/v1/integrations/brightpath:telegram-bot/switch-off', { reason: 'test', force: true });
    for (const [method, path] of [
      ['GET', '/statuses/'],
      ['DELETE', '/leads/1/'],
      ['POST', '/leads/1/comments/'],
      ['GET', '/anything/'],
    ] as const) {
      expect((await bot(method, path, method === 'POST' ? { text: 'x' } : undefined)).status, `${method} ${path}`).toBe(
        403,
      );
    }
    expect(seen).toEqual([]);
    const report = await admin('GET', '/admin/v1/integrations/brightpath:telegram-bot/report');
    expect(
      report.legacy.routes.find((r: { route: string }) => r.route === 'GET /api/bots/api/statuses/').calls_24h,
    ).toBeGreaterThanOrEqual(2);
  });
});
