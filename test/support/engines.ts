// Store-level tests run on every engine: SQLite always, PostgreSQL on a throwaway cluster when the
// machine has one (otherwise its half says it skipped, in one line).
import { afterAll, beforeAll, describe } from 'vitest';
import { openStore } from '../../src/store/open-store.js';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.js';
import type { Store, StoreEngine } from '../../src/store/store.js';
import { clusterOrSkip, freshDatabase, type TestPostgres } from './postgres.js';

/**
 * Opens a fresh, empty store of the engine; null when the engine cannot run here (the test skips).
 * `poolSize` sizes a PostgreSQL store's pool (4 unless given); SQLite has one connection anyway.
 */
export type OpenFresh = (options?: { poolSize?: number }) => Promise<Store | null>;

export function onEachEngine(body: (engine: StoreEngine, open: OpenFresh) => void): void {
  describe.each(['sqlite', 'postgres'] as const)('on %s', (engine) => {
    let cluster: TestPostgres | null = null;
    const stores: Store[] = [];
    if (engine === 'postgres') beforeAll(async () => void (cluster = await clusterOrSkip()), 60_000);
    afterAll(async () => {
      await Promise.all(stores.map((s) => s.close()));
      await cluster?.stop();
    });
    const open: OpenFresh = async (options) => {
      let store: Store;
      if (engine === 'sqlite') store = await openStore({ engine: 'sqlite', path: ':memory:', synchronous: 'FULL' });
      else if (cluster)
        store = await openPostgresStore({ url: await freshDatabase(cluster.url), poolSize: options?.poolSize ?? 4 });
      else return null;
      stores.push(store);
      return store;
    };
    body(engine, open);
  });
}
