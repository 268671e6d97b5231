// Rate limit per key: 429 with Retry-After and RateLimit headers; replays and 409s use no quota.
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_RULES, countRows, startGateway, type Gateway } from './helper.js';

let gw: Gateway;
beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-rules-'));
  cpSync(EXAMPLE_RULES, dir, { recursive: true });
  const file = join(dir, 'brightpath.yaml');
  writeFileSync(file, readFileSync(file, 'utf8').replace('  - slug: telegram-bot\n', '  - slug: telegram-bot\n    rate_limit_per_minute: 3\n'));
  gw = await startGateway({ rulesDir: dir });
});
afterAll(() => gw.close());

describe('rate limit per key', () => {
  it('answers 429 past the integration limit; replays, 409s, other keys and the admin API are not limited', async () => {
    const key = await gw.issueKey('brightpath:telegram-bot');
    const first = await gw.submit(key, { event_id: 'rl-1', first_name: 'A' });
    expect(first.headers['ratelimit-limit']).toBe('3');
    expect(first.headers['ratelimit-remaining']).toBe('2');
    expect((await gw.submit(key, { event_id: 'rl-2', first_name: 'B' })).statusCode).toBe(201);
    expect((await gw.submit(key, { event_id: 'rl-3', first_name: 'C' })).statusCode).toBe(201);

    const limited = await gw.submit(key, { event_id: 'rl-4', first_name: 'D' });
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(limited.json()).toMatchObject({ code: 'rate-limited', status: 429 });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.headers['ratelimit-remaining']).toBe('0');
    expect(countRows(gw.store, 'submissions', "event_id = 'rl-4'")).toBe(0);

    // A resend of a recorded event is answered, at no cost: replay, or 409 for other data.
    const replay = await gw.submit(key, { event_id: 'rl-1', first_name: 'A' });
    expect(replay.statusCode).toBe(200);
    expect(replay.json().replayed).toBe(true);
    expect((await gw.submit(key, { event_id: 'rl-1', first_name: 'Changed' })).statusCode).toBe(409);

    // Another integration's key has its own budget (the default, 600 a minute).
    const other = await gw.issueKey('brightpath:website-form');
    const res = await gw.submit(other, { event_id: 'rl-1', first_name: 'E' });
    expect(res.statusCode).toBe(201);
    expect(res.headers['ratelimit-limit']).toBe('600');

    // The service team's API and health endpoints are never limited.
    for (let i = 0; i < 5; i++) expect((await gw.admin('GET', '/admin/v1/integrations')).statusCode).toBe(200);
    expect((await gw.app.inject({ method: 'GET', url: '/healthz' })).headers['ratelimit-limit']).toBeUndefined();
  });
});
