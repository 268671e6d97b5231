// Three gateway processes on one PostgreSQL database share an integration's quota and an address's
// failed-authentication budget; with the shared counters out of reach each replica counts alone,
// allows its share of the limit and keeps serving, saying so once.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CHILD_ADMIN_TOKEN, spawnGateway, type ChildGateway } from '../support/child-gateway.js';
import { clusterOrSkip, freshDatabase, type TestPostgres } from '../support/postgres.js';
import { REPLICAS_LOOK_MS, SHARED_LIMITS_RETRY_MS, SHARED_LIMITS_TABLE } from '../../src/rate-limit/shared-limiter.js';
import { quotaTolerance } from '../../src/rate-limit/settled-quota.js';
import { sharedQuotaCounts } from '../support/quota-replicas.js';

const LIMIT = 30;
const AUTH_FAILURES = 10;
const LEADS = '/api/integrations/v1/leads/';

let cluster: TestPostgres | null = null;
let url = '';
let replicas: ChildGateway[] = [];

beforeAll(async () => {
  cluster = await clusterOrSkip();
  if (!cluster) return;
  url = await freshDatabase(cluster.url);
  // Started together: they take turns migrating, and all create the limiter's table if missing.
  replicas = await Promise.all(
    [0, 1, 2].map(() =>
      spawnGateway({
        env: {
          DATABASE_URL: url,
          RATE_LIMIT_PER_MINUTE: String(LIMIT),
          AUTH_FAILURES_PER_MINUTE: String(AUTH_FAILURES),
          TRUST_PROXY: '127.0.0.1',
        },
        capture: true,
      }),
    ),
  );
  // Started together, a replica may have looked before the others had registered: its next look sees
  // all three. Until then it takes a larger part of the quota's tolerance (and of the limit alone).
  await new Promise((r) => setTimeout(r, REPLICAS_LOOK_MS + 500));
}, 90_000);
afterAll(async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  await cluster?.stop();
});

interface Answer {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

async function send(
  replica: ChildGateway,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<Answer> {
  const res = await fetch(`${replica.address}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {}, headers: res.headers };
}

async function issueKey(handle: string): Promise<string> {
  const res = await send(
    replicas[0]!,
    `/admin/v1/integrations/${handle}/keys`,
    { authorization: `Bearer ${CHILD_ADMIN_TOKEN}` },
    {},
  );
  expect(res.status).toBe(201);
  return res.body.key as string;
}

/** Sends request `i` of `count` to replica `i % 3`, `inFlight` at a time; the answers in order of `i`. */
async function roundRobin(
  count: number,
  inFlight: number,
  request: (replica: ChildGateway, i: number) => Promise<Answer>,
): Promise<Answer[]> {
  const answers: Answer[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      for (let i = next++; i < count; i = next++) answers[i] = await request(replicas[i % replicas.length]!, i);
    }),
  );
  return answers;
}

const statuses = (answers: Answer[]) => answers.map((a) => a.status);
const count = (answers: Answer[], status: number) => answers.filter((a) => a.status === status).length;
const linesOf = (replica: ChildGateway, msg: RegExp) =>
  replica
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => msg.test(String(line.msg)));

function expectRateLimited(answer: Answer): void {
  expect(answer.status).toBe(429);
  expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(answer.body).toMatchObject({ code: 'rate-limited', status: 429 });
  const retryAfter = Number(answer.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThan(0);
  expect(retryAfter).toBeLessThanOrEqual(60);
}

describe('three replicas on one PostgreSQL', () => {
  it(`give an integration ${LIMIT} requests a minute in all, replays free on any replica`, async ({ skip }) => {
    if (!cluster) return skip();
    const key = await issueKey('brightpath:website-form');
    const auth = { authorization: `Bearer ${key}` };
    const lead = (i: number) => ({ event_id: `shared-${i}`, first_name: `Person ${i}` });

    const first = await roundRobin(20, 6, (replica, i) => send(replica, LEADS, auth, lead(i)));
    expect(statuses(first)).toEqual(Array(20).fill(201));
    // Each lead resent to another replica than the one that took it: a replay, and its unit given back.
    const resent = await roundRobin(20, 6, (replica, i) => send(replicas[(i + 1) % 3]!, LEADS, auth, lead(i)));
    expect(resent.every((a) => a.status < 300 && a.body.replayed === true)).toBe(true);
    // The unit a replay took is given back as it is answered: others in flight may hold one meanwhile.
    for (const a of resent) expect(Number(a.headers.get('ratelimit-remaining'))).toBeGreaterThanOrEqual(LIMIT - 20 - 6);

    // Each replica settles its counts within RATE_LIMIT_SYNC_MS: the shared row then holds the 20 leads.
    await vi.waitFor(async () => expect(await sharedQuotaCounts(url)).toEqual([20]), { timeout: 5_000, interval: 50 });

    // 25 new leads, 9 at a time across the three: the 10 units the replays left are taken, and at
    // most the tolerance more (each replica decides from the total it last read and its own units).
    const more = await roundRobin(25, 9, (replica, i) => send(replica, LEADS, auth, lead(100 + i)));
    expect(count(more, 201)).toBeGreaterThanOrEqual(LIMIT - 20);
    expect(count(more, 201)).toBeLessThanOrEqual(LIMIT - 20 + quotaTolerance(LIMIT, 3));
    expect(count(more, 429)).toBe(25 - count(more, 201));
    for (const refused of more.filter((a) => a.status === 429)) expectRateLimited(refused);
    expect(more.every((a) => a.status === 201 || a.status === 429)).toBe(true);
  });

  it(`cut off an address after ${AUTH_FAILURES} failed authentications, plus at most one per other replica`, async ({
    skip,
  }) => {
    if (!cluster) return skip();
    const from = { 'x-forwarded-for': '10.20.30.40' };
    const guesses = await roundRobin(30, 1, (replica, i) =>
      send(replica, LEADS, { ...from, authorization: `Bearer lgv1_guess${i}` }, { event_id: `g-${i}` }),
    );
    const unauthorized = count(guesses, 401);
    console.log(
      `failed authentications that reached the key lookup: ${unauthorized} of 30 (limit ${AUTH_FAILURES}, ${replicas.length} replicas)`,
    );
    expect(unauthorized).toBeGreaterThanOrEqual(AUTH_FAILURES);
    expect(unauthorized).toBeLessThanOrEqual(AUTH_FAILURES + replicas.length - 1);
    // Once refused, refused everywhere: every answer after the first 429 is a 429.
    const firstRefused = statuses(guesses).indexOf(429);
    expect(statuses(guesses).slice(firstRefused)).toEqual(Array(30 - firstRefused).fill(429));
    for (const refused of guesses.slice(firstRefused)) expectRateLimited(refused);
    // One warn line for the address, on whichever replica counted the last allowed failure.
    const warned = replicas.flatMap((r) => linesOf(r, /^failed authentications from this address throttled$/));
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({ client_address: '10.20.30.40', failures: AUTH_FAILURES });
    // Another address is not affected.
    expect(
      (
        await send(
          replicas[1]!,
          LEADS,
          { 'x-forwarded-for': '10.20.30.41', authorization: 'Bearer lgv1_guess-other' },
          { event_id: 'g' },
        )
      ).status,
    ).toBe(401);
  });

  it('count alone while the shared table is locked away: each its share, never a 5xx, one warn line per replica each way', async ({
    skip,
  }) => {
    if (!cluster) return skip();
    const key = await issueKey('smile-dental:booking-form');
    const auth = { authorization: `Bearer ${key}` };
    const locker = new pg.Client({ connectionString: url });
    await locker.connect();
    try {
      // Every count now waits for the lock until the limiter's short timeout, then counts locally.
      await locker.query('BEGIN');
      await locker.query(`LOCK TABLE ${SHARED_LIMITS_TABLE} IN ACCESS EXCLUSIVE MODE`);
      const perReplica = LIMIT + 3;
      const alone = await roundRobin(perReplica * 3, 6, (replica, i) =>
        send(replica, LEADS, auth, { event_id: `alone-${i}`, first_name: 'A' }),
      );
      // Each replica allowed its share, 30 / 3 live replicas: the limit in all (three times it before).
      expect(count(alone, 201)).toBe(LIMIT);
      expect(count(alone, 429)).toBe(perReplica * 3 - LIMIT);
      expect(alone.every((a) => a.status === 201 || a.status === 429)).toBe(true);
      for (const replica of replicas) {
        const fellBack = linesOf(replica, /^shared rate limits unreachable/);
        expect(fellBack).toHaveLength(1);
        expect(fellBack[0]).toMatchObject({ level: 40, table: SHARED_LIMITS_TABLE, live_replicas: 3 });
      }
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
    // After the retry period the next request on each replica counts in the database again.
    await new Promise((r) => setTimeout(r, SHARED_LIMITS_RETRY_MS + 200));
    for (const replica of replicas)
      await send(replica, LEADS, auth, { event_id: `back-${replica.pid}`, first_name: 'B' });
    for (const replica of replicas) {
      // The line comes through the child's stdout, which may arrive after its HTTP answer: waited for.
      for (
        let waited = 0;
        linesOf(replica, /^shared rate limits reachable again/).length === 0 && waited < 10_000;
        waited += 50
      ) {
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(linesOf(replica, /^shared rate limits unreachable/)).toHaveLength(1);
      expect(linesOf(replica, /^shared rate limits reachable again/)).toHaveLength(1);
    }
  }, 60_000);
});
