// The one factory of stores: the server, the CLI, the scripts, the benchmarks and the tests open
// their store here, and only here is an engine chosen.
import type { Config } from '../config.js';
import type { Store } from './store.js';
import type { Synchronous } from './sqlite/connection.js';
import { openSqliteStore } from './sqlite/sqlite-store.js';

/** How to open a store; `engine` says which, the rest is that engine's own. */
export type StoreOptions = {
  engine: 'sqlite';
  /** The database file (`:memory:` for a throw-away one). */
  path: string;
  synchronous: Synchronous;
  /** Free bytes the database's file system must keep for the store to report ready. */
  minFreeBytes?: number;
  /** Refuse to create a new database file (the CLI opens a gateway's database; it never makes one unasked). */
  mustExist?: boolean;
  /** Most units of work committed together in one transaction. */
  maxBatch?: number;
};

/** The store the configuration names: today always the SQLite file at DATABASE_PATH. */
export const storeOptionsFrom = (config: Pick<Config, 'databasePath' | 'sqliteSynchronous' | 'readyMinFreeBytes'>): StoreOptions => ({
  engine: 'sqlite',
  path: config.databasePath,
  synchronous: config.sqliteSynchronous,
  minFreeBytes: config.readyMinFreeBytes,
});

/** Opens (creating and migrating where allowed) the store; a database that cannot be used throws a StoreOpenError. */
export function openStore(options: StoreOptions): Store {
  switch (options.engine) {
    case 'sqlite': {
      const { engine: _engine, ...sqlite } = options;
      return openSqliteStore(sqlite);
    }
  }
}
