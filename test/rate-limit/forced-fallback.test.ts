// Two gateways on one PostgreSQL database, the shared quota forced into its fallback: together they
// allow at most the limit (plus the settlement's tolerance), an integration over its limit is refused
// without a statement, and the units a replica counted alone reach the shared count once the
// database answers again. A replica counting alone keeps the units the window had settled, and a
// failed authentication's count that fails leaves the quota alone.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { clusterOrSkip, type TestPostgres } from '../support/postgres.js';
import {
  alternate,
  count,
  issueKey,
  quotaReplicas,
  sharedQuotaCounts,
  whileAuthFailuresLocked,
  whileCountersLocked,
  type Replica,
} from '../support/quota-replicas.js';
import { quotaTolerance } from '../../src/rate-limit/settled-quota.js';

const LIMIT = 30;
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

async function twoReplicas(clusterUrl: string): Promise<{ url: string; replicas: Replica[] }> {
  const made = await quotaReplicas(clusterUrl, LIMIT, { retryMs: RETRY_MS });
  apps.push(...made.replicas.map((r) => r.app));
  return made;
}

/** One gateway on its own database, the quota settled every `syncMs` (0: a statement per request). */
async function oneReplica(clusterUrl: string, syncMs: number): Promise<{ url: string; replica: Replica }> {
  const made = await quotaReplicas(clusterUrl, LIMIT, { syncMs }, 1);
  apps.push(made.replicas[0]!.app);
  return { url: made.url, replica: made.replicas[0]! };
}

const remaining = (answers: { headers: Record<string, unknown> }[]) =>
  answers.map((a) => Number(a.headers['ratelimit-remaining']));

const unreachable = expect.stringMatching(/^shared rate limits unreachable/);
const reachableAgain = expect.stringMatching(/^shared rate limits reachable again/);

describe('the shared quota on two replicas', () => {
  it(`forced into its fallback, 1,000 new leads at 200 at once allow at most ${LIMIT} plus the tolerance in all`, async ({
    skip,
  }) => {
    if (!cluster) return skip();
    const { url, replicas } = await twoReplicas(cluster.url);
    const key = await issueKey(replicas[0]!.app);
    const answers = await whileCountersLocked(url, () => alternate(replicas, key, 'attack', 1_000, 200));
    // Each replica allows its share, 30 / 2 live replicas, of the units the shared count has not
    // taken (those it accepted before its settlement failed among them): never the whole limit each.
    expect(count(answers, 201)).toBeLessThanOrEqual(LIMIT + quotaTolerance(LIMIT, 2));
    expect(count(answers, 201)).toBeGreaterThanOrEqual(LIMIT - quotaTolerance(LIMIT, 2));
    expect(count(answers, 201) + count(answers, 429)).toBe(1_000);
    // One line each; the settlement that finds the table free again may have said so already.
    for (const replica of replicas) expect(replica.warnings.slice(0, 1)).toEqual([unreachable]);
    for (const replica of replicas) expect(replica.warnings.filter((w) => /unreachable/.test(w))).toHaveLength(1);
  }, 60_000);

  it('refuse an integration over its limit without asking the database until its window ends', async ({ skip }) => {
    if (!cluster) return skip();
    const { url, replicas } = await twoReplicas(cluster.url);
    const key = await issueKey(replicas[0]!.app);
    const first = await alternate(replicas, key, 'fill', LIMIT, 4);
    expect(count(first, 201)).toBe(LIMIT);
    // Each replica, one request at a time, until it refuses: it may accept its unseen budget before
    // its settlement reads the other's units. Every request is counted, the first refusal included.
    let counted = LIMIT;
    let accepted = LIMIT;
    for (const [i, replica] of replicas.entries()) {
      for (let n = 0; ; n++) {
        const [answer] = await alternate([replica], key, `over-${i}-${n}`, 1, 1);
        counted++;
        if (answer!.status === 429) break;
        expect(answer!.status).toBe(201);
        accepted++;
      }
    }
    expect(accepted).toBeLessThanOrEqual(LIMIT + quotaTolerance(LIMIT, 2));
    await vi.waitFor(async () => expect(await sharedQuotaCounts(url)).toEqual([counted]), {
      timeout: 5_000,
      interval: 50,
    });
    // Both replicas know the integration is over; the table is now locked: a statement would wait and fall back.
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
    // No statement waited for the lock (none fell back) and none reached the shared row.
    for (const replica of replicas) expect(replica.warnings).toEqual([]);
    expect(await sharedQuotaCounts(url)).toEqual([counted]);
  }, 30_000);

  it('add the units counted alone to the shared count when the database answers again', async ({ skip }) => {
    if (!cluster) return skip();
    const { url, replicas } = await twoReplicas(cluster.url);
    const [replica] = replicas;
    const key = await issueKey(replica!.app);
    expect(count(await alternate([replica!], key, 'before', 3, 1), 201)).toBe(3);
    await vi.waitFor(async () => expect(await sharedQuotaCounts(url)).toEqual([3]), { timeout: 5_000, interval: 50 });
    await whileCountersLocked(url, async () => {
      // Accepted, then not settled: the settlement waits for the lock until its timeout and fails.
      expect(count(await alternate([replica!], key, 'unsettled', 1, 1), 201)).toBe(1);
      await vi.waitFor(() => expect(replica!.warnings).toEqual([unreachable]), { timeout: 5_000, interval: 50 });
      // Counted alone on top of the 3 settled: 1 + 10 of the replica's share of the 27 left, 13.
      const alone = await alternate([replica!], key, 'alone', 10, 1);
      expect(count(alone, 201)).toBe(10);
      const share = Math.floor((LIMIT - 3) / 2);
      expect(alone.map((a) => a.headers['ratelimit-remaining'])).toEqual(
        Array.from({ length: 10 }, (_, i) => String(share - 2 - i)),
      );
    });
    // The first settlement after the retry period that finds the table free carries the 11 units to the shared row
    // (one may already be waiting for the lock when it goes).
    await vi.waitFor(async () => expect(await sharedQuotaCounts(url)).toEqual([3 + 1 + 10]), {
      timeout: 5_000,
      interval: 50,
    });
    expect(replica!.warnings).toEqual([unreachable, reachableAgain]);
    // Counted together again, from the shared total.
    const [after] = await alternate([replica!], key, 'after', 1, 1);
    expect(after!.status).toBe(201);
    expect(after!.headers['ratelimit-remaining']).toBe(String(LIMIT - 15));
  }, 30_000);
});

describe('the shared quota on two replicas counting alone', () => {
  it('finding 5: allow at most the limit, the tolerance and the share of the whole limit of each replica that read none of the window', async ({
    skip,
  }) => {
    if (!cluster) return skip();
    const { url, replicas } = await twoReplicas(cluster.url);
    const [filled, idle] = replicas as [Replica, Replica];
    const key = await issueKey(filled.app);
    expect(count(await alternate([filled], key, 'fill', LIMIT, 1), 201)).toBe(LIMIT);
    await vi.waitFor(async () => expect(await sharedQuotaCounts(url)).toEqual([LIMIT]), {
      timeout: 5_000,
      interval: 50,
    });
    const [again, alone] = await whileCountersLocked(url, async () => [
      await alternate([filled], key, 'again', 5, 1),
      await alternate([idle], key, 'alone', 20, 1),
    ]);
    // The replica that read the whole total keeps it: nothing more. The other read nothing of this
    // window: its share of the whole limit, 15, the worst case the docs state.
    expect(count(again, 201)).toBe(0);
    expect(count(alone, 201)).toBe(Math.floor(LIMIT / 2));
    expect(LIMIT + count(alone, 201)).toBeLessThanOrEqual(LIMIT + quotaTolerance(LIMIT, 2) + Math.floor(LIMIT / 2));
    for (const replica of replicas) expect(replica.warnings.slice(0, 1)).toEqual([unreachable]);
  }, 30_000);
});

describe.each([
  { mode: 'settled in batches', syncMs: 100 },
  { mode: 'counted per request', syncMs: 0 },
])('the shared quota $mode, on one replica', ({ syncMs }) => {
  it('finding 5: a failed-authentication count that fails leaves the quota counted on the shared total', async ({
    skip,
  }) => {
    if (!cluster) return skip();
    const { url, replica } = await oneReplica(cluster.url, syncMs);
    const key = await issueKey(replica.app);
    expect(count(await alternate([replica], key, 'before', 20, 1), 201)).toBe(20);
    await vi.waitFor(async () => expect(await sharedQuotaCounts(url)).toEqual([20]), { timeout: 5_000, interval: 50 });
    const guess = () =>
      replica.app.inject({
        method: 'POST',
        url: '/api/integrations/v1/leads/',
        headers: { authorization: 'Bearer lgv1_guess-finding-5' },
        payload: { event_id: 'g' },
      });
    expect((await guess()).statusCode).toBe(401);
    const after = await whileAuthFailuresLocked(url, async () => {
      // The failure's count waits for the locked row until the limiter's timeout: its counter falls back.
      expect((await guess()).statusCode).toBe(401);
      return alternate([replica], key, 'after', 20, 1);
    });
    // The quota still counts on the shared total: the 10 units left of the limit, not 20 more.
    expect(count(after, 201)).toBe(LIMIT - 20);
    expect(count(after, 429)).toBe(10);
    expect(remaining(after.slice(0, 10))).toEqual(Array.from({ length: 10 }, (_, i) => LIMIT - 21 - i));
    // Only the failed-authentication counter said it counts alone.
    expect(replica.warnings).toEqual([expect.stringMatching(/^shared failed-authentication counts unreachable/)]);
  }, 30_000);

  it('finding 5: a replica that cannot reach the shared count keeps the units of the window already settled', async ({
    skip,
  }) => {
    if (!cluster) return skip();
    const { url, replica } = await oneReplica(cluster.url, syncMs);
    const key = await issueKey(replica.app);
    expect(count(await alternate([replica], key, 'before', 20, 1), 201)).toBe(20);
    await vi.waitFor(async () => expect(await sharedQuotaCounts(url)).toEqual([20]), { timeout: 5_000, interval: 50 });
    const alone = await whileCountersLocked(url, async () => {
      // Accepted, then its count (or its settlement) waits for the lock until the timeout and fails.
      expect(count(await alternate([replica], key, 'unsettled', 1, 1), 201)).toBe(1);
      await vi.waitFor(() => expect(replica.warnings).toEqual([unreachable]), { timeout: 5_000, interval: 50 });
      return alternate([replica], key, 'alone', 20, 1);
    });
    // Counted alone from the 20 settled and the 1 not yet carried: 9 more reach the limit, no more.
    expect(count(alone, 201)).toBe(LIMIT - 21);
    expect(count(alone, 429)).toBe(20 - (LIMIT - 21));
    expect(remaining(alone.slice(0, LIMIT - 21))).toEqual(Array.from({ length: LIMIT - 21 }, (_, i) => LIMIT - 22 - i));
    const refused = alone.at(-1)!;
    expect(refused.status).toBe(429);
    expect(refused.headers['ratelimit-remaining']).toBe('0');
  }, 30_000);
});
