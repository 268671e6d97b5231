// Two gateways on one PostgreSQL database, the shared quota forced into its fallback: together they
// allow at most the limit, an integration over its limit is refused without a statement, and the
// units a replica counted alone reach the shared count once the database answers again.
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { clusterOrSkip, freshDatabase, type TestPostgres } from '../support/postgres.js';
import { SHARED_LIMITS_TABLE, openSharedLimiters, type LimiterLog } from '../../src/rate-limit/shared-limiter.js';
import { buildApp } from '../../src/app.js';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.js';
import { createRulesHolder } from '../../src/rules/loader.js';
import { EXAMPLE_RULES } from '../helper.js';

const LIMIT = 30;
const ADMIN = 'fallback-admin-token-0123456789abcdef';
const LEADS = '/api/integrations/v1/leads/';
/** Short enough that a test waits little for the database to be tried again. */
const RETRY_MS = 300;

let cluster: TestPostgres | null = null;
let apps: FastifyInstance[] = [];
beforeAll(async () => void (cluster = await clusterOrSkip()), 60_000);
afterEach(async () => {
  await Promise.all(apps.map((app) => app.close()));
  apps = [];
});
afterAll(async () => void (await cluster?.stop()));

interface Replica {
  app: FastifyInstance;
  warnings: string[];
}

/** Two gateways on a fresh database, each with its store (and its row in `replicas`) and its shared counters. */
async function twoReplicas(clusterUrl: string): Promise<{ url: string; replicas: Replica[] }> {
  const url = await freshDatabase(clusterUrl);
  // Both stores first: each one's limiter then sees two live replicas when it opens.
  const first = await openPostgresStore({ url, poolSize: 4 });
  const stores = [first, await openPostgresStore({ url, poolSize: 4 })];
  const replicas: Replica[] = [];
  for (const store of stores) {
    const warnings: string[] = [];
    const log: LimiterLog = { warn: (_fields, message) => void warnings.push(message) };
    const limiters = await openSharedLimiters(url, log, { replicas: store.replicas, retryMs: RETRY_MS });
    const app = await buildApp({ adminToken: ADMIN, rateLimitPerMinute: LIMIT }, { store, rules: createRulesHolder(EXAMPLE_RULES), limiters });
    apps.push(app);
    replicas.push({ app, warnings });
  }
  return { url, replicas };
}

async function issueKey(app: FastifyInstance): Promise<string> {
  const res = await app.inject({ method: 'POST', url: '/admin/v1/integrations/brightpath:website-form/keys', headers: { authorization: `Bearer ${ADMIN}` } });
  expect(res.statusCode).toBe(201);
  return res.json<{ key: string }>().key;
}

interface Answer {
  status: number;
  headers: Record<string, unknown>;
}

/** Request `i` of `count` (a new lead) goes to replica `i % 2`, `inFlight` at a time. */
async function alternate(replicas: Replica[], key: string, tag: string, count: number, inFlight: number): Promise<Answer[]> {
  const answers: Answer[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      for (let i = next++; i < count; i = next++) {
        const res = await replicas[i % replicas.length]!.app.inject({
          method: 'POST',
          url: LEADS,
          headers: { authorization: `Bearer ${key}` },
          payload: { event_id: `${tag}-${i}`, first_name: 'Fallback' },
        });
        answers[i] = { status: res.statusCode, headers: res.headers };
      }
    }),
  );
  return answers;
}

const count = (answers: Answer[], status: number) => answers.filter((a) => a.status === status).length;

/** Runs `work` while the shared counters' table is locked: every count waits for the limiter's timeout, then falls back. */
async function whileCountersLocked<T>(url: string, work: () => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('BEGIN');
    await client.query(`LOCK TABLE ${SHARED_LIMITS_TABLE} IN ACCESS EXCLUSIVE MODE`);
    return await work();
  } finally {
    await client.query('ROLLBACK').catch(() => {});
    await client.end();
  }
}

async function sharedQuotaCounts(url: string): Promise<number[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ points: number }>(`SELECT points FROM ${SHARED_LIMITS_TABLE} WHERE key LIKE 'quota:%'`);
    return rows.map((r) => Number(r.points));
  } finally {
    await client.end();
  }
}

describe('the shared quota on two replicas', () => {
  it(`forced into its fallback, 1,000 new leads at 200 at once allow at most ${LIMIT} in all`, async ({ skip }) => {
    if (!cluster) return skip();
    const { url, replicas } = await twoReplicas(cluster.url);
    const key = await issueKey(replicas[0]!.app);
    const answers = await whileCountersLocked(url, () => alternate(replicas, key, 'attack', 1_000, 200));
    // Each replica allows its share, 30 / 2 live replicas: never the whole limit each.
    expect(count(answers, 201)).toBeLessThanOrEqual(LIMIT);
    expect(count(answers, 201)).toBe(LIMIT);
    expect(count(answers, 201) + count(answers, 429)).toBe(1_000);
    for (const replica of replicas) expect(replica.warnings).toEqual([expect.stringMatching(/^shared rate limits unreachable/)]);
  }, 60_000);

  it('refuse an integration over its limit without asking the database until its window ends', async ({ skip }) => {
    if (!cluster) return skip();
    const { url, replicas } = await twoReplicas(cluster.url);
    const key = await issueKey(replicas[0]!.app);
    const first = await alternate(replicas, key, 'fill', LIMIT, 4);
    expect(count(first, 201)).toBe(LIMIT);
    // Then one request to each replica, one after the other: each is told by the shared count that the
    // integration is over (sent together, both refusals could have landed on one replica).
    for (const [i, replica] of replicas.entries()) expect(count(await alternate([replica], key, `over-${i}`, 1, 1), 429)).toBe(1);
    // Both replicas have seen the shared count over the limit; the table is now locked: a count would wait and fall back.
    const refused = await whileCountersLocked(url, () => alternate(replicas, key, 'over', 20, 5));
    expect(count(refused, 429)).toBe(20);
    for (const answer of refused) {
      expect(answer.headers['ratelimit-limit']).toBe(String(LIMIT));
      expect(answer.headers['ratelimit-remaining']).toBe('0');
      const reset = Number(answer.headers['ratelimit-reset']);
      expect(reset).toBeGreaterThan(0);
      expect(reset).toBeLessThanOrEqual(60);
      expect(Number(answer.headers['retry-after'])).toBe(Math.max(reset, 1));
    }
    // No count waited for the lock (none fell back) and none reached the shared row.
    for (const replica of replicas) expect(replica.warnings).toEqual([]);
    expect(await sharedQuotaCounts(url)).toEqual([LIMIT + 2]);
  }, 30_000);

  it('add the units counted alone to the shared count when the database answers again', async ({ skip }) => {
    if (!cluster) return skip();
    const { url, replicas } = await twoReplicas(cluster.url);
    const key = await issueKey(replicas[0]!.app);
    expect(count(await alternate(replicas.slice(0, 1), key, 'before', 3, 1), 201)).toBe(3);
    const alone = await whileCountersLocked(url, () => alternate(replicas.slice(0, 1), key, 'alone', 10, 1));
    expect(count(alone, 201)).toBe(10);
    expect(await sharedQuotaCounts(url)).toEqual([3]);
    // After the retry period the next request probes the database; the 10 units go to the shared row with it.
    await new Promise((r) => setTimeout(r, RETRY_MS + 50));
    expect(count(await alternate(replicas.slice(0, 1), key, 'after', 1, 1), 201)).toBe(1);
    await vi.waitFor(async () => expect(await sharedQuotaCounts(url)).toEqual([3 + 10 + 1]), { timeout: 5_000, interval: 50 });
    expect(replicas[0]!.warnings).toEqual([expect.stringMatching(/^shared rate limits unreachable/), expect.stringMatching(/^shared rate limits reachable again/)]);
  }, 30_000);
});
