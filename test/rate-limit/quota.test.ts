// The per-integration quota: every keyed request counts, 4xx included, and is refused with 429 before
// its body is read once the quota is used up; replays, 409s and storage failures give their unit back.
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'undici';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_RULES, startGateway, type Gateway } from '../helper.js';
import { FREE_OUTCOMES_FACTOR } from '../../src/rate-limit/quota.js';

const LEADS = '/api/integrations/v1/leads/';
const ANSWERS = '/api/integrations/v1/leads/answers/';

let gw: Gateway;
beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-rules-'));
  cpSync(EXAMPLE_RULES, dir, { recursive: true });
  const file = join(dir, 'brightpath.yaml');
  writeFileSync(
    file,
    readFileSync(file, 'utf8').replace(
      '  - slug: telegram-bot\n',
      '  - slug: telegram-bot\n    rate_limit_per_minute: 6\n',
    ),
  );
  // Integrations without their own limit get 8 a minute.
  gw = await startGateway({ rulesDir: dir, rateLimitPerMinute: 8 });
});
afterAll(() => gw.close());

const post = (key: string, url: string, payload: string | object, headers: Record<string, string> = {}) =>
  gw.app.inject({
    method: 'POST',
    url,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    payload,
  });

/** The three RateLimit headers of an answer, as numbers. */
function quotaOf(res: LightMyRequestResponse) {
  return {
    limit: Number(res.headers['ratelimit-limit']),
    remaining: Number(res.headers['ratelimit-remaining']),
    reset: Number(res.headers['ratelimit-reset']),
  };
}

describe('the quota of an integration', () => {
  it('counts every keyed request, 400/404/413/415/422 included; once used up, even a malformed body gets 429', async () => {
    const key = await gw.issueKey('brightpath:telegram-bot'); // 6 a minute, from its rules
    const sent: [number, LightMyRequestResponse][] = [
      [201, await post(key, LEADS, { event_id: 'q-1', first_name: 'A' })],
      [422, await post(key, LEADS, { event_id: 'q-2' })],
      [400, await post(key, LEADS, '{"event_id": "q-3", ')],
      [415, await post(key, LEADS, 'event_id=q-4', { 'content-type': 'text/plain' })],
      [413, await post(key, LEADS, `{"event_id":"q-5","first_name":"${'x'.repeat(1_100_000)}"}`)],
      [404, await post(key, ANSWERS, { event_id: 'q-6', external_contact_id: 'nobody', answers: { a: 'b' } })],
    ];
    sent.forEach(([status, res], i) => {
      expect(res.statusCode).toBe(status);
      expect(quotaOf(res)).toMatchObject({ limit: 6, remaining: 5 - i });
      expect(quotaOf(res).reset).toBeGreaterThan(0);
      expect(quotaOf(res).reset).toBeLessThanOrEqual(60);
    });

    // The same malformed body that got 400 now gets 429: it was refused before being parsed.
    const limited = await post(key, LEADS, '{"event_id": "q-3", ');
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(limited.json()).toMatchObject({ code: 'rate-limited', status: 429 });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(quotaOf(limited)).toMatchObject({ limit: 6, remaining: 0 });

    expect((await post(key, LEADS, { event_id: 'q-7', first_name: 'B' })).statusCode).toBe(429);
    expect(await gw.inspect.submissions.count({ eventId: 'q-7' })).toBe(0);
    // While the quota is used up even a replay is refused (docs/api.md): it is answered after the reset.
    expect((await post(key, LEADS, { event_id: 'q-1', first_name: 'A' })).statusCode).toBe(429);
  });

  it('gives the unit back for replays and 409s of leads and answers: remaining stays', async () => {
    const key = await gw.issueKey('brightpath:website-form'); // the default, 8 a minute
    const first = await post(key, LEADS, { event_id: 'r-1', external_contact_id: 'c-1', first_name: 'A' });
    expect(first.statusCode).toBe(201);
    expect(quotaOf(first)).toMatchObject({ limit: 8, remaining: 7 });

    const replay = await post(key, LEADS, { event_id: 'r-1', external_contact_id: 'c-1', first_name: 'A' });
    expect(replay.json()).toMatchObject({ replayed: true });
    expect(quotaOf(replay).remaining).toBe(7);
    const conflict = await post(key, LEADS, { event_id: 'r-1', external_contact_id: 'c-1', first_name: 'Changed' });
    expect(conflict.statusCode).toBe(409);
    expect(quotaOf(conflict).remaining).toBe(7);

    const answers = { event_id: 'r-2', external_contact_id: 'c-1', answers: { laptop: 'yes' } };
    expect(quotaOf(await post(key, ANSWERS, answers)).remaining).toBe(6);
    const answersReplay = await post(key, ANSWERS, answers);
    expect(answersReplay.json()).toMatchObject({ replayed: true });
    expect(quotaOf(answersReplay).remaining).toBe(6);
    const answersConflict = await post(key, ANSWERS, { ...answers, answers: { laptop: 'no' } });
    expect(answersConflict.statusCode).toBe(409);
    expect(quotaOf(answersConflict).remaining).toBe(6);

    // Eight requests counted in all, whatever was resent in between.
    const fresh: number[] = [];
    for (let i = 0; i < 7; i++)
      fresh.push((await post(key, LEADS, { event_id: `r-more-${i}`, first_name: 'N' })).statusCode);
    expect(fresh).toEqual([201, 201, 201, 201, 201, 201, 429]);
  });

  it('caps free outcomes at FREE_OUTCOMES_FACTOR times the quota: an endless 409 loop is refused', async () => {
    const own = await startGateway({ rateLimitPerMinute: 3 });
    try {
      const key = await own.issueKey('smile-dental:booking-form');
      const send = (body: object) =>
        own.app.inject({ method: 'POST', url: LEADS, headers: { authorization: `Bearer ${key}` }, payload: body });
      expect((await send({ event_id: 'loop', first_name: 'A' })).statusCode).toBe(201);
      const ceiling = 3 * FREE_OUTCOMES_FACTOR;
      const statuses: number[] = [];
      for (let i = 0; i < ceiling + 2; i++)
        statuses.push((await send({ event_id: 'loop', first_name: `Other ${i}` })).statusCode);
      expect(statuses.slice(0, ceiling).every((s) => s === 409)).toBe(true);
      expect(statuses.slice(ceiling)).toEqual([429, 429]);
      const refused = await send({ event_id: 'fresh', first_name: 'B' });
      expect(refused.statusCode).toBe(429);
      expect(refused.json().detail).toMatch(
        new RegExp(`More than ${ceiling} replayed or conflicting requests a minute`),
      );
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    } finally {
      await own.close();
    }
  });

  it('is shared by the v1 and legacy keys of an integration; legacy replays are free, a switched-off key costs nothing', async () => {
    const handle = 'smile-dental:booking-form'; // the default, 8 a minute
    await gw.admin('POST', `/admin/v1/integrations/${handle}/keys/import`, { key: 'booking-bot-legacy-key' });
    const v1 = await gw.issueKey(handle);
    const legacy = (method: 'GET' | 'POST', path: string, payload?: object) =>
      gw.app.inject({
        method,
        url: `/api/bots/api/${path}`,
        headers: { 'x-bot-api-key': 'booking-bot-legacy-key' },
        ...(payload ? { payload } : {}),
      });

    expect(quotaOf(await post(v1, LEADS, { event_id: 's-1', first_name: 'A' })).remaining).toBe(7);
    const created = await legacy('POST', 'leads/', { first_name: 'Bot' });
    expect(created.statusCode).toBe(201);
    expect(quotaOf(created)).toMatchObject({ limit: 8, remaining: 6 });
    const retried = await legacy('POST', 'leads/', { first_name: 'Bot' });
    expect(retried.statusCode).toBe(201);
    expect(quotaOf(retried).remaining).toBe(6);
    expect(quotaOf(await legacy('GET', 'boards/')).remaining).toBe(5);

    // Once switched off, the legacy key's 403 is answered before the quota: the v1 key keeps its budget.
    const off = await gw.admin('POST', `/admin/v1/integrations/${handle}/switch-off`, { force: true, reason: 'test' });
    expect(off.statusCode).toBe(200);
    const refused = await legacy('GET', 'boards/');
    expect(refused.statusCode).toBe(403);
    expect(refused.headers['ratelimit-remaining']).toBeUndefined();
    await gw.admin('POST', `/admin/v1/integrations/${handle}/rollback`, { reason: 'test' });

    // What the legacy key used is missing from the v1 key's budget, and the other way round.
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++)
      statuses.push((await post(v1, LEADS, { event_id: `s-more-${i}`, first_name: 'N' })).statusCode);
    expect(statuses).toEqual([201, 201, 201, 201, 201]);
    const limited = await legacy('GET', 'boards/');
    expect(limited.statusCode).toBe(429);
    expect(limited.headers.deprecation).toBeDefined();
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('refuses an integration over its limit until its window ends, and asks again once a rules reload raises the limit', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-rules-'));
    cpSync(EXAMPLE_RULES, dir, { recursive: true });
    const file = join(dir, 'brightpath.yaml');
    const original = readFileSync(file, 'utf8');
    const withLimit = (n: number) =>
      original.replace('  - slug: website-form\n', `  - slug: website-form\n    rate_limit_per_minute: ${n}\n`);
    writeFileSync(file, withLimit(2));
    const own = await startGateway({ rulesDir: dir, rateLimitPerMinute: 8 });
    try {
      const key = await own.issueKey('brightpath:website-form');
      const submit = (eventId: string) =>
        own.app.inject({
          method: 'POST',
          url: LEADS,
          headers: { authorization: `Bearer ${key}` },
          payload: { event_id: eventId, first_name: 'Over' },
        });
      expect([(await submit('o-1')).statusCode, (await submit('o-2')).statusCode]).toEqual([201, 201]);
      for (const eventId of ['o-3', 'o-4', 'o-5']) {
        const refused = await submit(eventId);
        expect(refused.statusCode).toBe(429);
        expect(quotaOf(refused)).toMatchObject({ limit: 2, remaining: 0 });
        expect(Number(refused.headers['retry-after'])).toBe(Math.max(quotaOf(refused).reset, 1));
      }
      writeFileSync(file, withLimit(6));
      expect((await own.admin('POST', '/admin/v1/rules/reload')).statusCode).toBe(200);
      const after = await submit('o-6');
      expect(after.statusCode).toBe(201);
      expect(quotaOf(after).limit).toBe(6);
    } finally {
      await own.close();
    }
  });

  it('is not consulted by the admin API and health endpoints', async () => {
    for (let i = 0; i < 10; i++) expect((await gw.admin('GET', '/admin/v1/integrations')).statusCode).toBe(200);
    expect((await gw.app.inject({ method: 'GET', url: '/healthz' })).headers['ratelimit-limit']).toBeUndefined();
  });
});

describe('a storage failure', () => {
  it('answers 503 without using quota', async () => {
    const own = await startGateway({ rateLimitPerMinute: 5 });
    try {
      const key = await own.issueKey('brightpath:telegram-bot');
      const submit = (eventId: string) => own.submit(key, { event_id: eventId, first_name: 'Disk' });
      expect(quotaOf(await submit('d-1')).remaining).toBe(4);
      // The database refuses every write, as a disk that stopped taking them would.
      await own.inspect.refuseWrites(true);
      for (const eventId of ['d-2', 'd-3', 'd-4']) {
        const failed = await submit(eventId);
        expect(failed.statusCode).toBe(503);
        expect(quotaOf(failed)).toMatchObject({ limit: 5, remaining: 4 });
      }
      await own.inspect.refuseWrites(false);
      expect(quotaOf(await submit('d-2')).remaining).toBe(3);
    } finally {
      await own.inspect.refuseWrites(false);
      await own.close();
    }
  });
});

describe('over real HTTP', () => {
  it('refuses a 0.7 MB body with 413 unread while the quota lasts, 429 once it is used up, and the connection stays usable', async () => {
    const own = await startGateway({ rateLimitPerMinute: 2 });
    const address = await own.app.listen({ port: 0, host: '127.0.0.1' });
    const client = new Client(address, { pipelining: 1 }); // one connection, kept alive
    try {
      const key = await own.issueKey('brightpath:telegram-bot');
      const big = `{"event_id":"big","first_name":"${'x'.repeat(700_000)}`; // never closed: malformed JSON
      const send = async () => {
        const res = await client.request({
          method: 'POST',
          path: LEADS,
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: big,
        });
        const body = (await res.body.json()) as { code: string };
        return {
          status: res.statusCode,
          code: body.code,
          retryAfter: res.headers['retry-after'],
          remaining: res.headers['ratelimit-remaining'],
        };
      };
      // Over the lead route's body limit: refused from its Content-Length, yet charged.
      expect(await send()).toMatchObject({ status: 413, code: 'payload-too-large', remaining: '1' });
      expect(await send()).toMatchObject({ status: 413, code: 'payload-too-large', remaining: '0' });
      for (let i = 0; i < 3; i++) {
        const limited = await send();
        expect(limited).toMatchObject({ status: 429, code: 'rate-limited', remaining: '0' });
        expect(Number(limited.retryAfter)).toBeGreaterThan(0);
      }
    } finally {
      await client.close();
      await own.close();
    }
  });
});
