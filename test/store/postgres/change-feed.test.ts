// The change feed: a key or state changed through one process is forgotten by every other process on
// the database before the change is answered, and a process whose feed is down remembers nothing.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresStore, type PostgresStore } from '../../../src/store/postgres/postgres-store.js';
import { SEEN_TIMEOUT_MS } from '../../../src/store/postgres/change-feed.js';
import { hotRead, forgetHotReads } from '../../../src/store/hot-reads.js';
import { clusterOrSkip, freshDatabase, type TestPostgres } from '../../support/postgres.js';
import { aKey } from '../../support/records.js';

let cluster: TestPostgres | null = null;
const stores: PostgresStore[] = [];
beforeAll(async () => void (cluster = await clusterOrSkip()), 60_000);
afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()));
  await cluster?.stop();
});

const warnings: string[] = [];
const log = { warn: (_: unknown, message: string) => void warnings.push(message), info: () => {} };

/** Two processes' stores on one fresh database (two pools, two feeds: as two replicas). */
async function twoReplicas(): Promise<[PostgresStore, PostgresStore, string]> {
  const url = await freshDatabase(cluster!.url);
  const a = await openPostgresStore({ url, poolSize: 2, log });
  const b = await openPostgresStore({ url, poolSize: 2, log });
  stores.push(a, b);
  return [a, b, url];
}

const key = aKey('k1', { hash: 'h1' });
/** What a request does: the key by hash, remembered for a second. */
const lookUp = (store: PostgresStore) =>
  hotRead(
    store,
    'key:h1',
    () => store.readOne((r) => r.keys.findByHash('h1')),
    (k) => k !== null,
  );
const until = async (check: () => Promise<boolean> | boolean, ms = 5_000) => {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('the change feed', () => {
  it('makes the next look-up in another process see a revocation, once the change is answered', async (context) => {
    if (!cluster) return context.skip();
    const [a, b] = await twoReplicas();
    await a.transact((tx) => tx.keys.insert(key));
    await a.awaitChangeSeen();
    for (let round = 0; round < 5; round++) {
      const at = `2026-11-22T00:00:0${round}Z`;
      expect((await lookUp(b))?.revokedAt).toBeNull();
      expect((await lookUp(b))?.revokedAt).toBeNull(); // remembered now
      await a.transact((tx) => tx.keys.revoke('k1', at));
      forgetHotReads(a);
      expect(await a.awaitChangeSeen()).toEqual([]);
      expect((await lookUp(b))?.revokedAt).toBe(at);
      // Live again for the next round, through the other process this time.
      await b.transact((tx) => tx.keys.insert({ ...key, id: `k-${round}`, hash: `other-${round}` }));
      await a.pool.query("UPDATE api_keys SET revoked_at = NULL WHERE id = 'k1'");
      await a.awaitChangeSeen();
    }
  });

  it('remembers nothing while its connection is gone, and sees a change made meanwhile once back', async (context) => {
    if (!cluster) return context.skip();
    const [a, b] = await twoReplicas();
    await a.transact((tx) => tx.keys.insert(key));
    await a.awaitChangeSeen();
    const before = b.changeGeneration();
    expect(b.changeGeneration()).toBe(before);
    const killed = await a.pool.query<{ n: number }>(
      "SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = 'lead-gateway change feed' AND datname = current_database()",
    );
    expect(killed.rows[0]!.n).toBe(2);
    await until(() => b.changeGeneration() !== b.changeGeneration()); // every call a new generation: nothing kept
    await a.transact((tx) => tx.keys.revoke('k1', 'gone-meanwhile'));
    expect((await lookUp(b))?.revokedAt).toBe('gone-meanwhile');
    // Back within the reconnect delay: generations stand still again, and changes are awaited again.
    await until(() => b.changeGeneration() === b.changeGeneration());
    expect(warnings).toContain(
      'change feed lost its connection: keys and states are read from the database on every request until it is back',
    );
    const seen = b.changeGeneration();
    await a.transact((tx) => tx.states.set('int-1', 'switched_off', 't'));
    expect(await a.awaitChangeSeen()).toEqual([]);
    expect(b.changeGeneration()).not.toBe(seen);
  });

  it('does not wait for a process that stopped beating, and names a live one that does not answer', async (context) => {
    if (!cluster) return context.skip();
    const [a, , url] = await twoReplicas();
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    try {
      await db.query(
        "INSERT INTO replicas (id, seen_version, heartbeat_at) VALUES ('dead', 0, now() - interval '1 minute')",
      );
      await a.transact((tx) => tx.states.set('int-1', 'migrating', 't'));
      expect(await a.awaitChangeSeen()).toEqual([]);
      await db.query("INSERT INTO replicas (id, seen_version, heartbeat_at) VALUES ('stuck', 0, now())");
      const started = Date.now();
      expect(await a.awaitChangeSeen()).toEqual(['stuck']);
      expect(Date.now() - started).toBeGreaterThanOrEqual(SEEN_TIMEOUT_MS - 50);
      expect(warnings).toContain(
        'change feed: these processes did not confirm a change of keys or states in time; any read they remembered from before it has expired by now',
      );
    } finally {
      await db.end();
    }
  });

  it('joins again when its row was removed as silent, and remembers nothing until then', async (context) => {
    if (!cluster) return context.skip();
    const [a, b] = await twoReplicas();
    await a.pool.query('DELETE FROM replicas WHERE id = $1', [b.replicaId()]);
    // The next heartbeat finds no row, and records the process again.
    await until(
      async () => (await a.pool.query('SELECT 1 FROM replicas WHERE id = $1', [b.replicaId()])).rowCount === 1,
    );
    await a.transact((tx) => tx.states.set('int-1', 'migrating', 't'));
    expect(await a.awaitChangeSeen()).toEqual([]);
  });

  it('takes a closed process off the list at once', async (context) => {
    if (!cluster) return context.skip();
    const [a, b] = await twoReplicas();
    expect((await a.pool.query('SELECT count(*)::int AS n FROM replicas')).rows[0].n).toBe(2);
    await b.close();
    stores.splice(stores.indexOf(b), 1);
    expect((await a.pool.query('SELECT count(*)::int AS n FROM replicas')).rows[0].n).toBe(1);
  });
});
