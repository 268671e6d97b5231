// A SQLite file read for `lead-gateway copy`: held alone for the whole copy, written never, its rows
// handed over as they are stored (integers as bigint, so no count or amount loses digits).
import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { StoreOpenError } from '../store.js';
import { explainOpenFailure, type Db } from './connection.js';
import { migrations } from './migrations.js';

/** A row as the file stores it: text, bigint, a float, a blob or null, in the order of `columns`. */
export type SourceValue = string | bigint | number | Buffer | null;

export interface CopySource {
  /** The absolute path of the file. */
  location: string;
  /** The file's tables, SQLite's own left out. */
  tables(): string[];
  /** The columns of `table` in the file, in their order; empty when there is no such table. */
  columns(table: string): string[];
  count(table: string): number;
  /** The rows of `table`, `size` at a time, in primary key order, values in the order of `columns(table)`. */
  batches(table: string, size: number): Generator<SourceValue[][]>;
  /**
   * Every foreign key of `tables` checked (on SQLite every reference of the schema is one): the rows
   * that name a row their parent table does not hold, the first `shown` of each by key, and how many.
   */
  brokenReferences(tables: readonly string[], shown: number): BrokenReference[];
  close(): void;
}

/** The rows of one reference that name a parent row the file does not hold. */
export interface BrokenReference {
  table: string;
  /** The referring column (columns, for a key of several). */
  columns: string[];
  parent: string;
  count: number;
  /** The first rows by key: their key, column by column, and the values that name the missing row. */
  rows: { key: [string, SourceValue][]; names: SourceValue[] }[];
}

const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * Opens the gateway's file for a copy, refused while any other connection has it open. A gateway keeps
 * its connections open while it runs, but takes the write lock only inside a batch of units, so a
 * plain write lock could be had between two of them. Instead the connection asks for SQLite's
 * exclusive locking mode and an exclusive transaction without waiting: in WAL mode that needs the
 * file's shared memory to itself, which every open connection of a gateway holds a share of, idle
 * or not. Held until `close`, it also keeps a gateway from starting on the file meanwhile (it cannot
 * read its schema). The connection never writes: `query_only` refuses any statement that would. A
 * -wal file a killed gateway left is read with the file, and folded into it when this connection,
 * the last, closes (as any last connection's close does).
 */
export function openCopySource(path: string): CopySource {
  const location = resolve(path);
  if (!existsSync(path)) throw new StoreOpenError(location, 'no such file');
  let db: Db;
  try {
    db = new Database(path, { fileMustExist: true });
  } catch (error) {
    throw explainOpenFailure(path, error);
  }
  try {
    db.pragma('busy_timeout = 0');
    db.pragma('locking_mode = EXCLUSIVE');
    try {
      db.exec('BEGIN EXCLUSIVE');
    } catch (error) {
      if (String((error as { code?: unknown }).code).startsWith('SQLITE_BUSY')) {
        throw new StoreOpenError(
          location,
          'a gateway (or another program) has it open: stop every gateway on this file first, then copy',
        );
      }
      throw error;
    }
    db.pragma('query_only = ON');
    checkSchema(db, location);
  } catch (error) {
    db.close();
    throw explainOpenFailure(path, error);
  }

  const columnsOf = (table: string) =>
    (db.pragma(`table_info(${quoted(table)})`) as { name: string }[]).map((c) => c.name);
  /** The primary key's columns in key order: rows come out in that order, a WITHOUT ROWID table's too. */
  const keyOf = (table: string) =>
    (db.pragma(`table_info(${quoted(table)})`) as { name: string; pk: number }[])
      .filter((c) => c.pk > 0)
      .sort((a, b) => a.pk - b.pk)
      .map((c) => c.name);

  return {
    location,
    tables: () =>
      db
        .prepare(
          "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
        )
        .pluck()
        .all() as string[],
    columns: columnsOf,
    count: (table) =>
      Number(
        db
          .prepare(`SELECT count(*) FROM ${quoted(table)}`)
          .pluck()
          .get(),
      ),
    *batches(table, size) {
      const columns = columnsOf(table);
      const key = keyOf(table);
      const order = key.length > 0 ? ` ORDER BY ${key.map(quoted).join(', ')}` : '';
      const statement = db
        .prepare(`SELECT ${columns.map(quoted).join(', ')} FROM ${quoted(table)}${order}`)
        .raw()
        .safeIntegers();
      let batch: SourceValue[][] = [];
      for (const row of statement.iterate() as IterableIterator<SourceValue[]>) {
        batch.push(row);
        if (batch.length === size) {
          yield batch;
          batch = [];
        }
      }
      if (batch.length > 0) yield batch;
    },
    brokenReferences(tables, shown) {
      const broken: BrokenReference[] = [];
      for (const table of tables) {
        const keys = db.pragma(`foreign_key_list(${quoted(table)})`) as {
          id: number;
          seq: number;
          table: string;
          from: string;
          to: string | null;
        }[];
        const key = keyOf(table).length > 0 ? keyOf(table) : ['rowid'];
        for (const id of new Set(keys.map((k) => k.id))) {
          const parts = keys.filter((k) => k.id === id).sort((a, b) => a.seq - b.seq);
          const parent = parts[0]!.table;
          // A key that names no parent column names the parent's primary key.
          const to = parts.map((p) => p.to ?? keyOf(parent)[p.seq] ?? 'rowid');
          const from = `FROM ${quoted(table)} c LEFT JOIN ${quoted(parent)} p ON ${parts.map((p, i) => `p.${quoted(to[i]!)} = c.${quoted(p.from)}`).join(' AND ')}
            WHERE ${parts.map((p) => `c.${quoted(p.from)} IS NOT NULL`).join(' AND ')} AND p.${quoted(to[0]!)} IS NULL`;
          const count = Number(db.prepare(`SELECT count(*) ${from}`).pluck().get());
          if (count === 0) continue;
          const shownColumns = [...key, ...parts.map((p) => p.from)].map((c) => `c.${quoted(c)}`).join(', ');
          const rows = db
            .prepare(`SELECT ${shownColumns} ${from} ORDER BY ${key.map((c) => `c.${quoted(c)}`).join(', ')} LIMIT ?`)
            .raw()
            .safeIntegers()
            .all(shown) as SourceValue[][];
          broken.push({
            table,
            columns: parts.map((p) => p.from),
            parent,
            count,
            rows: rows.map((row) => ({
              key: key.map((c, i) => [c, row[i]!] as [string, SourceValue]),
              names: row.slice(key.length),
            })),
          });
        }
      }
      return broken;
    },
    close() {
      // The exclusive transaction only ever read: ending it writes nothing.
      if (db.inTransaction) db.exec('ROLLBACK');
      db.close();
    },
  };
}

/** A lead-gateway file at the schema this release writes, or a StoreOpenError saying what to do. */
function checkSchema(db: Db, location: string): void {
  const current = Math.max(...migrations.map((m) => m.version));
  const version = db.pragma('user_version', { simple: true }) as number;
  const known = db
    .prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('api_keys', 'leads', 'submissions')")
    .pluck()
    .get() as number;
  if (version === 0 || known < 3) throw new StoreOpenError(location, 'it is not a lead-gateway database');
  if (version < current) {
    throw new StoreOpenError(
      location,
      `its schema is at version ${version}, older than this release's ${current}: start this release's gateway on it once (it migrates the file), stop it, then copy`,
    );
  }
  if (version > current)
    throw new StoreOpenError(
      location,
      `its schema is at version ${version}, newer than this release's ${current}: copy with the release that wrote it`,
    );
}
