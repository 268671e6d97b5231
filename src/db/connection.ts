// Opens SQLite connections with the pragmas every connection needs (durability, locking, keys).
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

export type Synchronous = 'FULL' | 'NORMAL' | 'OFF';
export type Db = Database.Database;

export interface OpenOptions {
  synchronous: Synchronous;
  readonly?: boolean;
}

const synchronousValue: Record<Synchronous, number> = { OFF: 0, NORMAL: 1, FULL: 2 };

/**
 * better-sqlite3 is built to run WAL at synchronous=NORMAL and silently drops back to it at the first
 * write unless the pragma is set on the connection itself; NORMAL loses acknowledged commits on power
 * loss. So every connection sets it, and `assertSynchronous` re-checks it after writes.
 */
export function openDatabase(path: string, options: OpenOptions): Db {
  if (path !== ':memory:' && !options.readonly) mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path, { readonly: options.readonly ?? false, fileMustExist: options.readonly ?? false });
  db.pragma('busy_timeout = 5000');
  if (!options.readonly) db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${options.synchronous}`);
  db.pragma('foreign_keys = ON');
  // Reads through a memory map and a 32 MB page cache: the reader connection re-reads pages after
  // every commit, and large tables' indexes should stay cached (docs/performance.md).
  db.pragma('mmap_size = 268435456');
  db.pragma('cache_size = -32768');
  // Statement and savepoint journals in memory: every unit of work runs in a SAVEPOINT and every
  // trigger-firing statement opens a statement journal, and on a file each first change to a page
  // cost a write() (15-20% of the store's time per submission). A journal lives only until its
  // savepoint is released.
  db.pragma('temp_store = MEMORY');
  assertSynchronous(db, options.synchronous);
  return db;
}

export function assertSynchronous(db: Db, expected: Synchronous): void {
  const actual = db.pragma('synchronous', { simple: true });
  if (actual !== synchronousValue[expected]) {
    throw new Error(`SQLite synchronous is ${String(actual)}, expected ${expected}`);
  }
}
