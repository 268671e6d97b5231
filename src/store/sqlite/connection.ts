// Opens SQLite connections with the pragmas every connection needs (durability, locking, keys).
import Database from 'better-sqlite3';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { StoreOpenError } from '../store.js';

export type Synchronous = 'FULL' | 'NORMAL' | 'OFF';
export type Db = Database.Database;

export interface OpenOptions {
  synchronous: Synchronous;
  readonly?: boolean;
  /** Refuse to create the file (the CLI opens a gateway's database; it never makes a new one unasked). */
  mustExist?: boolean;
}

/** `problem` about the file at `path`, told with the file's absolute path. */
const openError = (path: string, problem: string, options?: { cause?: unknown }) =>
  new StoreOpenError(resolve(path), problem, options);

/**
 * Creates the missing folders of `folder` one level at a time. Node's recursive mkdir loops forever
 * under /proc, and its errors name the deepest folder rather than the one that could not be made.
 */
function ensureFolder(path: string, folder: string): void {
  const missing: string[] = [];
  let at = resolve(folder);
  while (!existsSync(at)) {
    missing.unshift(at);
    const parent = dirname(at);
    if (parent === at) break;
    at = parent;
  }
  if (existsSync(at) && !statSync(at).isDirectory()) throw openError(path, `${at} is a file, not a folder`);
  for (const dir of missing) {
    try {
      mkdirSync(dir);
    } catch (error) {
      throw openError(
        path,
        `its folder ${dir} cannot be created (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
        { cause: error },
      );
    }
  }
}

/** SQLite's and the file system's refusals, told as what the operator has to change. */
export function explainOpenFailure(path: string, error: unknown): StoreOpenError {
  if (error instanceof StoreOpenError) return error;
  const code = String((error as { code?: unknown } | null)?.code ?? '');
  if (existsSync(path) && statSync(path).isDirectory())
    return openError(path, 'it is a folder; name a file in it, e.g. lead-gateway.db', { cause: error });
  if (code.startsWith('SQLITE_READONLY') || code === 'EACCES' || code === 'EPERM' || code === 'EROFS')
    return openError(path, 'it cannot be written (read-only file, folder or mount, or owned by another user)', {
      cause: error,
    });
  if (code === 'SQLITE_NOTADB') return openError(path, 'it is not a SQLite database', { cause: error });
  if (code.startsWith('SQLITE_CANTOPEN') || code.startsWith('SQLITE_IOERR'))
    return openError(path, 'it cannot be opened or created (check that its folder exists and is writable)', {
      cause: error,
    });
  return openError(path, (error as Error).message, { cause: error });
}

const synchronousValue: Record<Synchronous, number> = { OFF: 0, NORMAL: 1, FULL: 2 };

/**
 * better-sqlite3 is built to run WAL at synchronous=NORMAL and silently drops back to it at the first
 * write unless the pragma is set on the connection itself; NORMAL loses acknowledged commits on power
 * loss. So every connection sets it, and `assertSynchronous` re-checks it after writes.
 */
export function openDatabase(path: string, options: OpenOptions): Db {
  const mustExist = (options.readonly ?? false) || (options.mustExist ?? false);
  if (path !== ':memory:') {
    if (mustExist && !existsSync(path)) throw openError(path, 'no such file');
    if (!options.readonly) ensureFolder(path, dirname(path));
  }
  const db = new Database(path, { readonly: options.readonly ?? false, fileMustExist: mustExist });
  db.pragma('busy_timeout = 5000');
  if (!options.readonly) db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${options.synchronous}`);
  db.pragma('foreign_keys = ON');
  // Reads through a 64 MB memory map and a 32 MB page cache: the reader connection re-reads pages
  // after every commit, and large tables' indexes should stay cached. A larger map cost more than it
  // saved: resident map pages count in the process's RSS, which the memory target bounds, and new
  // leads were no faster with it (bench/results/LOG.md, "The memory map").
  db.pragma('mmap_size = 67108864');
  db.pragma('cache_size = -32768');
  // Statement and savepoint journals in memory: every unit of work runs in a SAVEPOINT and every
  // trigger-firing statement opens a statement journal, and on a file each first change to a page
  // costs a write() (bench/results/LOG.md, "Earlier changes to the write path"). A journal lives
  // only until its savepoint is released.
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
