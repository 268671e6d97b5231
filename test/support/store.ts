// The store a test opens beside its gateway: a fresh database of the engine the test project runs
// on (vitest.config.ts): a SQLite file in the test's own folder, or a new database on the suite's
// PostgreSQL cluster (test/support/postgres-setup.ts).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';
import { openStore } from '../../src/store/open-store.js';
import { isPostgresStore } from '../../src/store/postgres/postgres-store.js';
import type { Store, StoreEngine } from '../../src/store/store.js';
import { freshDatabase } from './postgres.js';

/** The engine of this test project: `TEST_STORE_ENGINE=postgres` in the PostgreSQL project, else SQLite. */
export const testEngine = (): StoreEngine => (process.env.TEST_STORE_ENGINE === 'postgres' ? 'postgres' : 'sqlite');

/** Where each test store is, as the variables a gateway or CLI process is given to open the same database. */
const databaseEnvs = new WeakMap<Store, Record<string, string>>();

/** A new store in `dir` (SQLite: the file `name` there; PostgreSQL: a new database), opened as the server opens its own. */
export async function openTestStore(
  dir: string,
  name = 'gateway.db',
  options: { statementTimeoutMs?: number } = {},
): Promise<Store> {
  let store: Store;
  if (testEngine() === 'postgres') {
    const url = await freshDatabase(inject('postgresUrl'));
    store = await openStore({ engine: 'postgres', url, poolSize: 4, ...options });
    databaseEnvs.set(store, { DATABASE_URL: url });
  } else {
    store = await openStore({ engine: 'sqlite', path: join(dir, name), synchronous: 'FULL' });
    databaseEnvs.set(store, { DATABASE_PATH: join(dir, name) });
  }
  return store;
}

/** The environment that points a child process (the CLI, another gateway) at `store`'s database. */
export const databaseEnv = (store: Store): Record<string, string> => {
  const env = databaseEnvs.get(store);
  if (!env) throw new Error('not a store opened by openTestStore');
  return env;
};

/**
 * The files a store's contents are in, for a search of everything it holds: SQLite's database and
 * WAL files, or (PostgreSQL) a text dump of every row of every table, written to `dir` while the
 * store is still open.
 */
export async function storeContentFiles(store: Store, dir: string, name = 'gateway.db'): Promise<string[]> {
  if (!isPostgresStore(store)) return [join(dir, name), join(dir, `${name}-wal`)];
  const tables = await store.pool.query<{ name: string }>(
    'SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema()',
  );
  const dump: string[] = [];
  for (const { name: table } of tables.rows) {
    const rows = await store.pool.query<{ row: string }>(`SELECT t::text AS row FROM "${table}" t`);
    dump.push(`-- ${table}`, ...rows.rows.map((r) => r.row));
  }
  const file = join(dir, 'database-dump.txt');
  writeFileSync(file, dump.join('\n'));
  return [file];
}
