// The one factory of stores: the server, the CLI, the scripts, the benchmarks and the tests open
// their store here, and only here is an engine chosen.
import { resolve } from 'node:path';
import type { Config } from '../config.js';
import type { Store } from './store.js';
import type { Synchronous } from './sqlite/connection.js';
import { openSqliteStore } from './sqlite/sqlite-store.js';
import { openPostgresStore } from './postgres/postgres-store.js';
import { safeLocation } from './postgres/pool.js';
import type { FeedLog } from './postgres/change-feed.js';

/** How to open a store; `engine` says which, the rest is that engine's own. */
export type StoreOptions = SqliteOptions | PostgresOptions;

export interface SqliteOptions {
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
}

export interface PostgresOptions {
  engine: 'postgres';
  /** postgres://user:password@host:port/database; the database must exist, its schema is migrated on open. */
  url: string;
  /** Most connections this process holds (default 10). */
  poolSize?: number;
  /** statement_timeout and lock_timeout of every connection (default 5 s). */
  statementTimeoutMs?: number;
  /** Longest a unit waits for a connection (default 5 s). */
  connectTimeoutMs?: number;
  /** Told of a failure of a connection nobody was using (a restarted server): the pool replaces it. */
  onIdleError?: (error: Error) => void;
  /** Where the change feed reports a lost or regained connection, or a change not seen everywhere in time. */
  log?: FeedLog;
  /** Told the name of every statement sent (tests count a request's round trips with it). */
  onStatement?: (statement: string) => void;
}

/** The store the configuration names: PostgreSQL when DATABASE_URL is set, else the SQLite file at DATABASE_PATH. */
export const storeOptionsFrom = (
  config: Pick<
    Config,
    | 'databasePath'
    | 'databaseUrl'
    | 'databasePoolSize'
    | 'databaseStatementTimeoutMs'
    | 'sqliteSynchronous'
    | 'readyMinFreeBytes'
  >,
): StoreOptions =>
  config.databaseUrl !== null
    ? {
        engine: 'postgres',
        url: config.databaseUrl,
        poolSize: config.databasePoolSize,
        statementTimeoutMs: config.databaseStatementTimeoutMs,
      }
    : {
        engine: 'sqlite',
        path: config.databasePath,
        synchronous: config.sqliteSynchronous,
        minFreeBytes: config.readyMinFreeBytes,
      };

/** Where the store is, as logs and messages may show it: a file's absolute path, or the URL without its password. */
export const storeLocation = (options: StoreOptions): string =>
  options.engine === 'sqlite'
    ? options.path === ':memory:'
      ? options.path
      : resolve(options.path)
    : safeLocation(options.url);

/**
 * Opens the store, creating (SQLite, where allowed) and migrating its schema; a PostgreSQL schema is
 * migrated under an advisory lock, so replicas starting together take turns. A database that cannot
 * be used throws a StoreOpenError.
 */
export async function openStore(options: StoreOptions): Promise<Store> {
  switch (options.engine) {
    case 'sqlite': {
      const { engine: _engine, ...sqlite } = options;
      return openSqliteStore(sqlite);
    }
    case 'postgres': {
      const { engine: _engine, ...postgres } = options;
      return openPostgresStore(postgres);
    }
  }
}
