// The quota counted in each replica's memory and settled in batches (the default on PostgreSQL):
// what the replicas accepted reaches the shared row, an attack on two replicas gets at most the limit
// plus the stated tolerance, RateLimit-Remaining is the replica's estimate, and closing settles.
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { clusterOrSkip, freshDatabase, type TestPostgres } from '../support/postgres.js';
import {
  alternate,
  count,
  issueKey,
  quotaReplicas,
  sharedQuotaCounts,
  type Replica,
} from '../support/quota-replicas.js';
import { quotaTolerance } from '../../src/rate-limit/settled-quota.js';
import { SHARED_LIMITS_TABLE, openSharedLimiters } from '../../src/rate-limit/shared-limiter.js';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.js';

let cluster: TestPostgres | null = null;
let apps: FastifyInstance[] = [];
beforeAll(async () => void (cluster = await clusterOrSkip()), 60_000);
afterEach(async () => {
  await Promise.all(apps.map((app) => app.close()));
  apps = [];
});
afterAll(async () => void (await cluster?.stop()));

async function replicasOf(clusterUrl: string, limit: number): Promise<{ url: string; replicas: Replica[] }> {
  const made = await quotaReplicas(clusterUrl, limit);
  apps.push(...made.replicas.map((r) => r.app));
  return made;
}

const remaining = (answer: { headers: Record<string, unknown> }) => Number(answer.headers['ratelimit-remaining']);

describe('the quota settled in batches', () => {
  it('adds what two replicas accepted to the shared row, less the units replays gave back', async ({ skip }) => {
    if (!cluster) return skip();
    const { url, replicas } = await replicasOf(cluster.url, 1_000);
    const key = await issueKey(replicas[0]!.app);
    const created = await alternate(replicas, key, 'lead', 120, 16);
    expect(count(created, 201)).toBe(120);
    // 20 of them sent again, each to the other replica than the one that took it: replays, their units given back.
    const resent = await alternate([replicas[1]!, replicas[0]!], key, 'lead', 20, 4);
    expect(count(resent, 200)).toBe(20);
    await vi.waitFor(async () => expect(await sharedQuotaCounts(url)).toEqual([120]), { timeout: 5_000, interval: 50 });
    for (const replica of replicas) expect(replica.warnings).toEqual([]);
  }, 30_000);

  it('gives an integration at most its limit plus the tolerance: 1,000 new leads at 200 at once on two replicas', async ({
    skip,
  }) => {
    if (!cluster) return skip();
    const LIMIT = 30;
    const { url, replicas } = await replicasOf(cluster.url, LIMIT);
    const key = await issueKey(replicas[0]!.app);
    const answers = await alternate(replicas, key, 'attack', 1_000, 200);
    expect(count(answers, 201)).toBeLessThanOrEqual(LIMIT + quotaTolerance(LIMIT, 2));
    expect(count(answers, 201)).toBeGreaterThanOrEqual(LIMIT - quotaTolerance(LIMIT, 2));
    expect(count(answers, 201) + count(answers, 429)).toBe(1_000);
    // Every accepted request reached the shared row, and the first refusals each replica counted.
    await vi.waitFor(
      async () => {
        const [total] = await sharedQuotaCounts(url);
        expect(total).toBeGreaterThan(count(answers, 201));
      },
      { timeout: 5_000, interval: 50 },
    );
    for (const replica of replicas) expect(replica.warnings).toEqual([]);
  }, 60_000);

  it('answers RateLimit-Remaining from what the replica knows, and reads the shared total once its unseen budget is spent', async ({
    skip,
  }) => {
    if (!cluster) return skip();
    const LIMIT = 30;
    const { url, replicas } = await replicasOf(cluster.url, LIMIT);
    const [first, second] = replicas as [Replica, Replica];
    const key = await issueKey(first.app);
    const taken = await alternate([first], key, 'first', 10, 1);
    expect(taken.map(remaining)).toEqual(Array.from({ length: 10 }, (_, i) => LIMIT - 1 - i));
    await vi.waitFor(async () => expect(await sharedQuotaCounts(url)).toEqual([10]), { timeout: 5_000, interval: 50 });
    // The second replica has read nothing yet: its first answer is its own estimate (1 used). Its
    // budget beyond the total it read is 1 (30 × 10% / 2 replicas), so its next request reads the
    // shared total first, which holds the first replica's 10.
    const [one] = await alternate([second], key, 'second-1', 1, 1);
    expect(remaining(one!)).toBe(LIMIT - 1);
    const [two] = await alternate([second], key, 'second-2', 1, 1);
    expect(remaining(two!)).toBe(LIMIT - 12);
    await vi.waitFor(async () => expect(await sharedQuotaCounts(url)).toEqual([12]), { timeout: 5_000, interval: 50 });
  }, 30_000);

  it('settles what a replica holds when it closes', async ({ skip }) => {
    if (!cluster) return skip();
    const url = await freshDatabase(cluster.url);
    await (await openPostgresStore({ url, poolSize: 1 })).close();
    // The longest interval: the counts wait for the close.
    const limiters = await openSharedLimiters(url, { warn: () => {} }, { syncMs: 1_000 });
    for (let i = 0; i < 7; i++) await limiters.quota.hit('closing', 100);
    await limiters.close();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query<{ points: number }>(
        `SELECT points FROM ${SHARED_LIMITS_TABLE} WHERE key = 'quota:closing'`,
      );
      expect(rows.map((r) => r.points)).toEqual([7]);
    } finally {
      await client.end();
    }
  });
});
