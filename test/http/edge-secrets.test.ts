// Secrets at rest and at the edge: imported key prefixes, repeated credential headers, request ids.
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../helper.js';
import { DEMO_LEGACY_KEY, DEMO_V1_KEY, ensureDemoKeys } from '../../src/demo.js';
import { createUsageRecorder } from '../../src/migration/usage.js';

let gw: Gateway;
let port: number;
let v1Key: string;
const legacyKey = 'lgbot-edge-test-key-with-many-characters-0001';

beforeAll(async () => {
  gw = await startGateway();
  v1Key = await gw.issueKey('brightpath:telegram-bot');
  expect(
    (await gw.admin('POST', '/admin/v1/integrations/brightpath:telegram-bot/keys/import', { key: legacyKey }))
      .statusCode,
  ).toBe(201);
  await gw.app.listen({ port: 0, host: '127.0.0.1' });
  port = (gw.app.server.address() as AddressInfo).port;
});
afterAll(() => gw.close());

/** Sends raw request text (a client library would merge or refuse repeated headers) and reads the answer. */
function rawRequest(head: string, body = ''): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    socket.on('data', (chunk) => (data += chunk.toString()));
    socket.on('error', reject);
    socket.on('end', () => {
      const [headers = '', text = ''] = data.split('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(headers)?.[1]), headers, body: text });
    });
    // Written, not ended: Node's server drops a request whose client half-closes before the answer.
    socket.write(`${head}Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  });
}

const lead = (eventId: string) => JSON.stringify({ event_id: eventId, first_name: 'Dilnoza', phone: '+998901234000' });

describe('repeated credential headers', () => {
  it('refuses two Authorization headers with 400, creating nothing, even when both are the valid key', async () => {
    for (const second of [v1Key, 'Bearer lgv1_someone-else']) {
      const res = await rawRequest(
        `POST /api/integrations/v1/leads/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer ${v1Key}\r\nAuthorization: ${second.startsWith('Bearer') ? second : `Bearer ${second}`}\r\n`,
        lead(`edge-dup-${second.length}`),
      );
      expect(res.status).toBe(400);
      expect(res.headers).toMatch(/content-type: application\/problem\+json/i);
      expect(JSON.parse(res.body)).toMatchObject({
        status: 400,
        code: 'bad-request',
        detail: 'Send one Authorization header, not 2.',
      });
    }
    const single = await rawRequest(
      `POST /api/integrations/v1/leads/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer ${v1Key}\r\n`,
      lead('edge-single'),
    );
    expect(single.status).toBe(201);
  });

  it('refuses two X-Bot-API-Key headers with 400', async () => {
    const res = await rawRequest(
      `GET /api/bots/api/boards/ HTTP/1.1\r\nHost: x\r\nX-Bot-API-Key: ${legacyKey}\r\nX-Bot-API-Key: ${legacyKey}\r\n`,
    );
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({
      code: 'bad-request',
      detail: 'Send one X-Bot-API-Key header, not 2.',
    });
    expect(
      (await rawRequest(`GET /api/bots/api/boards/ HTTP/1.1\r\nHost: x\r\nX-Bot-API-Key: ${legacyKey}\r\n`)).status,
    ).toBe(200);
  });

  it('refuses two admin Authorization headers too', async () => {
    const res = await rawRequest(
      `GET /admin/v1/integrations HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer wrong\r\nAuthorization: Bearer wrong-again\r\n`,
    );
    expect(res.status).toBe(400);
  });
});

describe('client request ids', () => {
  it('keeps a short plain id and replaces a long or unusual one', async () => {
    const kept = await gw.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'a'.repeat(64) } });
    expect(kept.headers['x-request-id']).toBe('a'.repeat(64));
    for (const given of ['a'.repeat(65), 'two words', 'semi;colon', '<script>', 'ünïcode']) {
      const res = await gw.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': given } });
      expect(res.headers['x-request-id'], given).toMatch(/^[0-9a-f-]{36}$/);
    }
  });
});

describe('imported legacy key prefixes', () => {
  it('show nothing of a short key, and 4 characters of a long one', async () => {
    const short = await gw.admin('POST', '/admin/v1/integrations/brightpath:website-form/keys/import', {
      key: 'k8chars!',
    });
    expect(short.json()).toMatchObject({ kind: 'legacy', prefix: '' });
    const long = await gw.admin('POST', '/admin/v1/integrations/brightpath:website-form/keys/import', {
      key: 'abcd-a-long-legacy-key-of-many-chars',
    });
    expect(long.json()).toMatchObject({ kind: 'legacy', prefix: 'abcd' });
    const listed = await gw.admin('GET', '/admin/v1/integrations/brightpath:website-form/keys');
    const prefixes = listed.json<{ items: { prefix: string }[] }>().items.map((k) => k.prefix);
    expect(prefixes.sort()).toEqual(['', 'abcd']);
    const audit = await gw.admin('GET', '/admin/v1/integrations/brightpath:website-form/audit');
    expect(audit.statusCode).toBe(200);
    expect(audit.body).toContain('legacy_key_imported');
    expect(audit.body).not.toContain('k8char');
  });
});

describe('demo keys in a production database', () => {
  it('are refused by a running gateway outside demo mode even while the database holds them live', async () => {
    const own = await startGateway();
    try {
      const demo = await ensureDemoKeys(own.store, createUsageRecorder(own.store), own.rules.current());
      expect(demo?.v1.live).toBe(true);
      const res = await own.submit(DEMO_V1_KEY, { event_id: 'demo-in-prod', first_name: 'Eve' });
      expect(res.statusCode).toBe(401);
      const legacy = await own.app.inject({
        method: 'GET',
        url: '/api/bots/api/boards/',
        headers: { 'x-bot-api-key': DEMO_LEGACY_KEY },
      });
      expect(legacy.statusCode).toBe(401);
    } finally {
      await own.close();
    }
  });
});
