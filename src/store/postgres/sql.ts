// What a PostgreSQL repository runs its statements on: the pool (one statement, autocommitted) or the
// client of a unit of work. Every statement is named, so each connection parses and plans it once.
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { UnitEndedError } from '../store.js';
import type { SharedSql } from '../statements/shared.js';

/**
 * A write whose result the unit does not read at once: the unit's connection may hold it back and send
 * it with the unit's other such writes as one statement (`writeBehind`). A write that must change a
 * row or fail the unit (an event recorded twice) fails as a statement, through a constraint: its
 * answer may come after the unit's COMMIT was sent, too late for a check in TypeScript.
 */
export interface LaterWrite {
  name: string;
  /** One INSERT or UPDATE without RETURNING, with its parameters numbered from $1. */
  text: string;
  values: unknown[];
  /**
   * The rows it writes, as `table:key`. Parts of one statement do not see each other's rows, and
   * ON CONFLICT cannot touch a row twice in one statement: a write of a row already held back goes
   * into the next statement.
   */
  rows: readonly string[];
}

export interface Sql {
  query<R extends pg.QueryResultRow>(config: pg.QueryConfig): Promise<pg.QueryResult<R>>;
  /** Holds a write back until the unit's next statement (absent on the pool, where a write runs at once). */
  later?(write: LaterWrite): void;
  /**
   * Sends a statement whose answer the unit does not read (a lock) at once, without waiting for it:
   * the statements after it go out behind it, and its failure fails the unit's next statement that
   * is awaited. Absent on the pool, where it runs and is awaited.
   */
  soon?(config: pg.QueryConfig): void;
  /**
   * A read whose answer may come inside the unit's next carrying statement (`carry`) started in the
   * same turn of the event loop, as a column of it, instead of as a statement of its own. It reads as
   * of that statement's start (its one snapshot), as a statement of its own sent just before it would.
   * When no carrying statement comes in the turn, it goes alone: before the unit's next statement, at
   * the unit's end, or at the turn's end. Absent on the pool, where it runs at once.
   */
  along?(read: AlongRead): Promise<pg.QueryResultRow[]>;
  /**
   * Sends a statement that answers exactly one row (a function's call), with the reads waiting to go
   * along (`along`) as columns of it. Absent on the pool.
   */
  carry?<R extends pg.QueryResultRow>(config: pg.QueryConfig): Promise<pg.QueryResult<R>>;
}

/** A read that may go along with a carrying statement: one SELECT, its parameters numbered from $1. */
export interface AlongRead {
  name: string;
  text: string;
  values: unknown[];
}

export { UnitEndedError };

/**
 * A unit's connection, pipelined (pool.ts): each statement goes out when it is started, without
 * waiting for the answers of those before it, and the server runs and answers them in that order. A
 * unit may start several repo calls at once (Promise.all), or statements it does not wait for (`soon`).
 *
 * Once a statement of a transaction fails, PostgreSQL answers each one after it with "current
 * transaction is aborted" (25P02): every statement of the unit that fails is told the first failure,
 * the one that says why (a deadlock to retry, a lock timeout, a duplicate event).
 *
 * `end` sends the unit's last statement (COMMIT or ROLLBACK) behind every statement started before it,
 * and refuses every statement started after it: a unit that fails while siblings still wait
 * (Promise.all rejects at the first failure) must not have them run after its ROLLBACK, outside its
 * transaction, on a connection already handed to the next unit. Its answer comes after theirs. A
 * second `end` (a ROLLBACK after a COMMIT already sent) sends nothing and answers as the first.
 */
export function inOrder(client: Sql): Sql & { end(text: string): Promise<pg.QueryResult> } {
  let ended: Promise<pg.QueryResult> | null = null;
  let firstFailure: { error: unknown } | null = null;
  const send = <R extends pg.QueryResultRow>(config: pg.QueryConfig): Promise<pg.QueryResult<R>> =>
    client.query<R>(config).catch((error: unknown) => {
      firstFailure ??= { error };
      throw firstFailure.error;
    });
  return {
    query: (config) => (ended ? Promise.reject(new UnitEndedError()) : send(config)),
    end(text) {
      if (ended === null) {
        ended = send({ text });
        // A unit that failed before awaiting its end (its writes' failure came first) may never await
        // it: its failure (a lost connection) must not count as unhandled, which would stop the process.
        ended.catch(() => {});
      }
      return ended;
    },
  };
}

/** Most writes sent as one statement: each distinct sequence of writes is one more prepared statement per connection. */
export const MAX_WRITES_PER_STATEMENT = 32;

/**
 * Several writes as one statement: a data-modifying CTE per write, parameters renumbered, and the
 * count of each write's rows as the answer. All parts run in one snapshot and none sees another's
 * rows; foreign keys and AFTER triggers (the lead counts) are checked and fired at the statement's
 * end, when every part's rows are there.
 */
export function batchOf(writes: readonly LaterWrite[]): pg.QueryConfig {
  const values: unknown[] = [];
  for (const w of writes) for (const v of w.values) values.push(v);
  return { ...batchShape(writes), values };
}

/** Most batch texts kept; past it the oldest goes (a batch's text depends only on its writes' texts). */
const MAX_BATCH_SHAPES = 256;
const batchShapes = new Map<string, { name: string; text: string; parts: readonly string[] }>();

/**
 * A batch's text and name, built once per sequence of statements and parameter counts (the same few
 * sequences recur: a new lead's writes, an attach's), instead of renumbering and hashing per unit.
 */
function batchShape(writes: readonly LaterWrite[]): { name: string; text: string } {
  let key = '';
  for (const w of writes) key += `${w.name}:${w.values.length};`;
  const known = batchShapes.get(key);
  // A statement's name stands for one text (pg refuses a name reused for another): checked all the same.
  if (known && writes.every((w, i) => known.parts[i] === w.text)) return { name: known.name, text: known.text };
  let offset = 0;
  const parts = writes.map((w, i) => {
    const part = `w${i} AS (${w.text.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`)} RETURNING 1)`;
    offset += w.values.length;
    return part;
  });
  const counts = writes.map((_, i) => `(SELECT count(*) FROM w${i})::int AS w${i}`);
  const text = `WITH ${parts.join(', ')} SELECT ${counts.join(', ')}`;
  const name = `batch.${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
  if (batchShapes.size >= MAX_BATCH_SHAPES) batchShapes.delete(batchShapes.keys().next().value!);
  batchShapes.set(key, { name, text, parts: writes.map((w) => w.text) });
  return { name, text };
}

/** Most carrying texts kept, as `MAX_BATCH_SHAPES`. */
const MAX_CARRY_SHAPES = 64;
const carryShapes = new Map<string, { name: string; text: string; parts: readonly string[] }>();

/**
 * A carrying statement's text: the carried statement as a subquery, and each read going along as a
 * column, its rows as one JSON array (an uncorrelated subquery, run in the statement's snapshot). A
 * row's values come as JSON gives them: text, booleans, arrays and objects as the driver gives them,
 * numbers as numbers (the driver gives numeric and bigint as text), so a read that goes along reads
 * its numbers with Number() or BigInt(), which take both.
 */
function carryShape(carried: pg.QueryConfig, reads: readonly AlongRead[]): { name: string; text: string } {
  let key = `${carried.name}:${carried.values?.length ?? 0};`;
  for (const r of reads) key += `${r.name}:${r.values.length};`;
  const texts = [carried.text, ...reads.map((r) => r.text)];
  const known = carryShapes.get(key);
  if (known && texts.every((t, i) => known.parts[i] === t)) return { name: known.name, text: known.text };
  let offset = carried.values?.length ?? 0;
  const columns = reads.map((r, i) => {
    const text = r.text.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`);
    offset += r.values.length;
    return `(SELECT coalesce(jsonb_agg(q), '[]'::jsonb) FROM (${text}) AS q) AS along${i}`;
  });
  const text = `SELECT c.*, ${columns.join(', ')} FROM (${carried.text}) AS c`;
  const name = `${carried.name}+along.${createHash('sha1').update(text).digest('hex').slice(0, 16)}`;
  if (carryShapes.size >= MAX_CARRY_SHAPES) carryShapes.delete(carryShapes.keys().next().value!);
  carryShapes.set(key, { name, text, parts: texts });
  return { name, text };
}

/** Sends held-back writes: one alone as itself, several as one statement. */
function send(sql: Sql, writes: readonly LaterWrite[]): Promise<unknown> {
  if (writes.length === 1) {
    const [w] = writes as [LaterWrite];
    return sql.query({ name: w.name, text: w.text, values: w.values });
  }
  return sql.query(batchOf(writes));
}

/**
 * A unit's connection that holds back writes whose result the unit does not read (`LaterWrite`) and
 * sends them together, as one statement, before the unit's next statement and before its COMMIT
 * (`flush`): what a unit reads it reads after its own writes, as if each had been sent at once. A
 * failure of a held-back write, or of a statement sent `soon`, fails the unit's next awaited
 * statement, and so the unit; a unit that throws first never sends what it holds.
 */
export function writeBehind(inner: Sql): Sql & { flush(): Promise<void> } {
  let held: LaterWrite[] = [];
  let rows = new Set<string>();
  let sent: Promise<unknown>[] = [];
  type Waiting = { read: AlongRead; resolve: (rows: pg.QueryResultRow[]) => void; reject: (error: unknown) => void };
  let along: Waiting[] = [];

  const track = (done: Promise<unknown>) => {
    // Awaited by the next flush; until then its failure must not count as unhandled.
    done.catch(() => {});
    sent.push(done);
  };
  const sendHeld = () => {
    if (held.length === 0) return;
    for (let i = 0; i < held.length; i += MAX_WRITES_PER_STATEMENT)
      track(send(inner, held.slice(i, i + MAX_WRITES_PER_STATEMENT)));
    held = [];
    rows = new Set();
  };
  /** Sends the reads waiting to go along, each as a statement of its own. */
  const sendAlong = () => {
    const waiting = along;
    along = [];
    for (const { read, resolve, reject } of waiting) {
      const done = inner.query({ name: read.name, text: read.text, values: read.values });
      done.then((result) => resolve(result.rows), reject);
      track(done);
    }
  };
  /** Sends what is held at once; resolves when it and every statement sent `soon` have answered. */
  const flush = (): Promise<void> => {
    sendHeld();
    sendAlong();
    const waiting = sent;
    sent = [];
    return Promise.all(waiting).then(() => undefined);
  };

  /** Sends what is held first: a unit reads its own writes. */
  const query = <R extends pg.QueryResultRow>(config: pg.QueryConfig): Promise<pg.QueryResult<R>> => {
    const flushed = flush();
    const result = inner.query<R>(config);
    return flushed.then(
      () => result,
      (error: unknown) => {
        result.catch(() => {});
        throw error;
      },
    );
  };

  return {
    flush,
    later(write) {
      if (write.rows.some((row) => rows.has(row))) sendHeld();
      held.push(write);
      for (const row of write.rows) rows.add(row);
    },
    soon(config) {
      sendHeld();
      sendAlong();
      track(inner.query(config));
    },
    along(read) {
      // Left alone when nothing carries it in this turn (a unit that fails before its next statement
      // may still await it): sent then, behind what the turn sent.
      if (along.length === 0) setImmediate(sendAlong);
      return new Promise((resolve, reject) => along.push({ read, resolve, reject }));
    },
    carry<R extends pg.QueryResultRow>(config: pg.QueryConfig): Promise<pg.QueryResult<R>> {
      const reads = along;
      along = [];
      if (reads.length === 0) return query<R>(config);
      const shape = carryShape(
        config,
        reads.map((r) => r.read),
      );
      const values = [...(config.values ?? []), ...reads.flatMap((r) => r.read.values)];
      return query<R>({ ...shape, values }).then(
        (result) => {
          const row: Record<string, unknown> = result.rows[0] ?? {};
          reads.forEach((r, i) => {
            r.resolve((row[`along${i}`] as pg.QueryResultRow[] | undefined) ?? []);
            delete row[`along${i}`];
          });
          return result;
        },
        (error: unknown) => {
          for (const r of reads) r.reject(error);
          throw error;
        },
      );
    },
    query,
  };
}

/** Holds `write` back on a unit's connection, or runs it at once on the pool. */
export async function writeLater(sql: Sql, write: LaterWrite): Promise<void> {
  if (sql.later) return sql.later(write);
  await sql.query({ name: write.name, text: write.text, values: write.values });
}

/** The name of a row for `LaterWrite.rows`: its table and key. */
export const rowName = (table: string, ...key: unknown[]): string => JSON.stringify([table, ...key]);

/** A named statement: `run(sql, ...values)` executes it prepared on whichever connection runs it. */
export function statement<R extends pg.QueryResultRow = pg.QueryResultRow>(name: string, text: string) {
  return {
    run: (sql: Sql, ...values: unknown[]): Promise<pg.QueryResult<R>> => sql.query<R>({ name, text, values }),
    rows: async (sql: Sql, ...values: unknown[]): Promise<R[]> => (await sql.query<R>({ name, text, values })).rows,
    one: async (sql: Sql, ...values: unknown[]): Promise<R | null> =>
      (await sql.query<R>({ name, text, values })).rows[0] ?? null,
    /** A write held back by a unit's connection (`writeBehind`), or run at once on the pool. */
    later: (sql: Sql, rows: readonly string[], ...values: unknown[]): Promise<void> =>
      writeLater(sql, { name, text, values, rows }),
    /** Its rows, going along with the unit's next carrying statement (`Sql.along`), or run at once. */
    rowsAlong: async (sql: Sql, ...values: unknown[]): Promise<R[]> =>
      sql.along
        ? ((await sql.along({ name, text, values })) as R[])
        : (await sql.query<R>({ name, text, values })).rows,
    /** Run carrying the reads waiting to go along (`Sql.carry`): a statement that answers exactly one row. */
    carrying: async (sql: Sql, ...values: unknown[]): Promise<R | null> =>
      (await (sql.carry ? sql.carry<R>({ name, text, values }) : sql.query<R>({ name, text, values }))).rows[0] ?? null,
    /** Sent at once on a unit's connection without waiting for its answer (`Sql.soon`); run and awaited on the pool. */
    soon: async (sql: Sql, ...values: unknown[]): Promise<void> => {
      if (sql.soon) return sql.soon({ name, text, values });
      await sql.query({ name, text, values });
    },
  };
}

/** A statement both engines share (src/store/statements/): its text as written, under its own name. */
export const sharedStatement = <R extends pg.QueryResultRow = pg.QueryResultRow>(shared: SharedSql) =>
  statement<R>(shared.name, shared.text);
