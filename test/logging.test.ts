// Logs: one JSON line per request with its context; no key or token ever reaches them.
import { Writable } from 'node:stream';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.js';
import { openTestStore } from './support/store.js';
import { createRulesHolder } from '../src/rules/loader.js';
import { createLogger } from '../src/logging.js';
import { ADMIN_TOKEN, EXAMPLE_RULES, recordForContract } from './helper.js';

const lines: string[] = [];
const sink = new Writable({
  write(chunk: Buffer, _encoding, done) {
    lines.push(...chunk.toString().split('\n').filter(Boolean));
    done();
  },
});
let app: FastifyInstance;

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-logs-'));
  app = await buildApp(
    { adminToken: ADMIN_TOKEN },
    {
      store: await openTestStore(dir, 'g.db'),
      rules: createRulesHolder(EXAMPLE_RULES),
      logger: createLogger('info', sink),
    },
  );
  recordForContract(app);
});
afterAll(() => app.close());

const entries = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>);

describe('request logs', () => {
  it('write one line per request with request id, integration, route, event_id, outcome, status and duration', async () => {
    const issued = await app.inject({
      method: 'POST',
      url: '/admin/v1/integrations/brightpath:telegram-bot/keys',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    const key = issued.json().key as string;
    lines.length = 0;
    const res = await app.inject({
      method: 'POST',
      url: '/api/integrations/v1/leads/',
      headers: { authorization: `Bearer ${key}` },
      payload: { event_id: 'log-1', first_name: 'Log' },
    });
    const mine = entries().filter((e) => e.request_id === res.headers['x-request-id']);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({
      msg: 'request completed',
      route: '/api/integrations/v1/leads/',
      method: 'POST',
      status: 201,
      integration: 'brightpath:telegram-bot',
      event_id: 'log-1',
      outcome: 'created',
      duration_ms: expect.any(Number),
    });
  });

  it('never contains a v1 key, a legacy key or the admin token, whatever happens', async () => {
    lines.length = 0;
    const issued = await app.inject({
      method: 'POST',
      url: '/admin/v1/integrations/brightpath:website-form/keys',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    const key = issued.json().key as string;
    const legacyKey = 'legacy-secret-key-abcdef';
    await app.inject({
      method: 'POST',
      url: '/admin/v1/integrations/brightpath:website-form/keys/import',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { key: legacyKey },
    });
    await app.inject({
      method: 'POST',
      url: '/api/integrations/v1/leads/',
      headers: { authorization: `Bearer ${key}` },
      payload: { event_id: 'x', first_name: 'A' },
    });
    await app.inject({
      method: 'POST',
      url: '/api/integrations/v1/leads/',
      headers: { authorization: `Bearer ${key}` },
      payload: '{"broken',
    });
    await app.inject({
      method: 'POST',
      url: '/api/integrations/v1/leads/',
      headers: { authorization: `Bearer ${key}x` },
      payload: { event_id: 'x', first_name: 'A' },
    });
    await app.inject({ method: 'GET', url: '/api/bots/api/statuses/', headers: { 'x-bot-api-key': legacyKey } });
    await app.inject({
      method: 'GET',
      url: '/api/bots/api/statuses/',
      headers: { 'x-bot-api-key': `${legacyKey}-wrong` },
    });
    const all = lines.join('\n');
    expect(lines.length).toBeGreaterThan(5);
    for (const secret of [key, legacyKey, ADMIN_TOKEN]) expect(all).not.toContain(secret);
  });
});
