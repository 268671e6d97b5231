// The PostgreSQL store: a unit commits whole or not at all, reads see one snapshot, deadlocks are run
// again, and the engine's failures reach callers as the store's own errors.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MAX_UNIT_ATTEMPTS,
  openPostgresStore,
  postgresStore,
  UnitAbortedError,
  type PostgresStore,
} from '../../../src/store/postgres/postgres-store.js';
import { createPool } from '../../../src/store/postgres/pool.js';
import { NotReadyError, StoreOpenError, StoreUnavailableError } from '../../../src/store/store.js';
import type { ApiKey } from '../../../src/store/repos/keys.js';
import { clusterOrSkip, freshDatabase, type TestPostgres } from '../../support/postgres.js';
import { aContact, aKey } from '../../support/records.js';

let cluster: TestPostgres | null = null;
const stores: PostgresStore[] = [];
beforeAll(async () => void (cluster = await clusterOrSkip()), 60_000);
afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()));
  await cluster?.stop();
});

const open = async (url?: string) => {
  const store = await openPostgresStore({ url: url ?? (await freshDatabase(cluster!.url)), poolSize: 4 });
  stores.push(store);
  return store;
};

const key = (id: string, hash = `hash-${id}`): ApiKey => aKey(id, { hash });

describe('the PostgreSQL store', () => {
  it('commits a unit, and a unit that throws leaves nothing behind', async (context) => {
    if (!cluster) return context.skip();
    const store = await open();
    await store.transact(async (tx) => tx.keys.insert(key('k1')));
    await expect(
      store.transact(async (tx) => {
        await tx.keys.insert(key('k2'));
        throw new Error('the unit changed its mind');
      }),
    ).rejects.toThrow('the unit changed its mind');
    expect((await store.readOne((r) => r.keys.listForIntegration('int-1'))).map((k) => k.id)).toEqual(['k1']);
    expect(await store.snapshot((r) => r.keys.findByHash('hash-k1'))).toEqual(key('k1'));
  });

  it('refuses to commit a unit one of whose statements failed, even when the unit caught the failure', async (context) => {
    if (!cluster) return context.skip();
    const store = await open();
    await store.transact(async (tx) => tx.keys.insert(key('k1')));
    await expect(
      store.transact(async (tx) => {
        await tx.keys.insert(key('k2'));
        await tx.keys.insert(key('k1', 'hash-k3')).catch(() => {}); // the id is taken (a taken hash is no failure: insert answers false)
      }),
    ).rejects.toBeInstanceOf(UnitAbortedError);
    expect((await store.readOne((r) => r.keys.listForIntegration('int-1'))).map((k) => k.id)).toEqual(['k1']);
  });

  it('reads in one snapshot: a commit during a read is not seen by it', async (context) => {
    if (!cluster) return context.skip();
    const store = await open();
    await store.transact(async (tx) => tx.keys.insert(key('k1')));
    const seen = await store.snapshot(async (r) => {
      const before = await r.keys.listForIntegration('int-1');
      await store.transact(async (tx) => tx.keys.insert(key('k2')));
      const after = await r.keys.listForIntegration('int-1');
      return [before.length, after.length];
    });
    expect(seen).toEqual([1, 1]);
    expect(await store.readOne((r) => r.keys.listForIntegration('int-1'))).toHaveLength(2);
  });

  it('runs a unit again when the server picked it as a deadlock victim', async (context) => {
    if (!cluster) return context.skip();
    const store = await open();
    await store.transact(async (tx) => {
      await tx.contacts.insert(aContact('c1'));
      await tx.contacts.insert(aContact('c2'));
    });
    // Each unit locks one row, waits until the other has locked the other, then wants it: a deadlock.
    // (Not keys: every change of a key also takes the change feed's row, which orders such units.)
    const signal = () => {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      return { promise, resolve };
    };
    const locked = [signal(), signal()];
    const runs = [0, 0];
    const unit = (i: 0 | 1, first: string, second: string) =>
      store.transact(async (tx) => {
        runs[i]!++;
        await tx.contacts.lock(first);
        locked[i]!.resolve();
        await locked[1 - i]!.promise;
        await tx.contacts.lock(second);
        await tx.contacts.fillEmpty(first, { lastName: `by ${i}` }, 't');
        return i;
      });
    const results = await Promise.all([unit(0, 'c1', 'c2'), unit(1, 'c2', 'c1')]);
    // The victim ran again (once seen under load: each unit twice); neither caller saw the deadlock,
    // and both units' writes stand.
    expect(Math.max(...runs)).toBeGreaterThan(1);
    expect(Math.max(...runs)).toBeLessThanOrEqual(MAX_UNIT_ATTEMPTS);
    expect(results).toEqual([0, 1]);
    const names = await store.snapshot(async (r) => [
      (await r.contacts.get('c1'))?.lastName,
      (await r.contacts.get('c2'))?.lastName,
    ]);
    expect(names).toEqual(['by 0', 'by 1']);
  });

  it('answers a statement the server cancelled (statement timeout) as StoreUnavailableError', async (context) => {
    if (!cluster) return context.skip();
    const url = await freshDatabase(cluster.url);
    const store = await openPostgresStore({ url, poolSize: 2, statementTimeoutMs: 200 });
    stores.push(store);
    await store.transact(async (tx) => tx.keys.insert(key('k1')));
    // Another session holds the row's lock longer than the store's statements may wait.
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query("SELECT * FROM api_keys WHERE id = 'k1' FOR UPDATE");
      const failure = await store.transact((tx) => tx.keys.revoke('k1', 't')).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(StoreUnavailableError);
      expect((failure as StoreUnavailableError).engineCode).toMatch(/^(55P03|57014)$/);
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
    expect(await store.transact((tx) => tx.keys.revoke('k1', 't'))).toBe(true);
  });

  it('recovers when the server ended its connections, and answers StoreUnavailableError while it cannot be reached', async (context) => {
    if (!cluster) return context.skip();
    const url = await freshDatabase(cluster.url);
    const store = await open(url);
    // Every connection of the store is ended by the server, as a restart ends them.
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await store.readOne((r) => r.keys.findByHash('x'));
    await admin.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'lead-gateway' AND datname = current_database() AND pid <> pg_backend_pid()",
    );
    await admin.end();
    // The pool drops the dead connections (their `error` events are listened to) and opens new ones.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await store.readOne((r) => r.keys.findByHash('x'))).toBeNull();

    const unreachable = new URL(url);
    unreachable.port = '1';
    const closed = await openPostgresStore({ url: unreachable.toString(), connectTimeoutMs: 500 }).catch(
      (error: unknown) => error,
    );
    expect(closed).toBeInstanceOf(StoreOpenError);
    expect((closed as StoreOpenError).location).toBe(unreachable.toString());
    const gone = postgresStore(createPool({ url: unreachable.toString(), connectTimeoutMs: 500 }), {
      version: 1,
      applied: [],
    });
    stores.push(gone);
    for (const attempt of [
      () => gone.transact((tx) => tx.keys.insert(key('k1'))),
      () => gone.snapshot((r) => r.keys.findByHash('x')),
      () => gone.readOne((r) => r.keys.findByHash('x')),
    ]) {
      const failure = await attempt().catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(StoreUnavailableError);
      expect((failure as StoreUnavailableError).engineCode).toBe('ECONNREFUSED');
    }
  });

  it('checks readiness with a real write, and reports a database that takes no writes', async (context) => {
    if (!cluster) return context.skip();
    const url = await freshDatabase(cluster.url);
    await (await open(url)).checkReady();
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`ALTER DATABASE ${new URL(url).pathname.slice(1)} SET default_transaction_read_only = on`);
    await admin.end();
    const readOnly = await open(url).catch((error: unknown) => error);
    // The schema is migrated already, so the store opens; the write is what fails.
    expect(readOnly).not.toBeInstanceOf(Error);
    // It cannot record itself for the change feed, so it remembers no key or state.
    expect((readOnly as PostgresStore).changeGeneration()).not.toBe((readOnly as PostgresStore).changeGeneration());
    const failure = await (readOnly as PostgresStore).checkReady().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(NotReadyError);
    expect((failure as NotReadyError).reason).toBe('read-only');
    const unit = await (readOnly as PostgresStore)
      .transact((tx) => tx.keys.insert(key('k9')))
      .catch((error: unknown) => error);
    expect(unit).toBeInstanceOf(StoreUnavailableError);
    expect((unit as StoreUnavailableError).engineCode).toBe('25006');
  });
});
