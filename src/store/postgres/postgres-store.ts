// The PostgreSQL store: a pool of connections; each unit of work is one transaction on one connection,
// answered only after its COMMIT returned (synchronous_commit stays on: the commit is durable).
import type pg from 'pg';
import { NotReadyError, StoreOpenError, type Repos, type SchemaState, type Store } from '../store.js';
import { createPool, safeLocation, type PoolOptions } from './pool.js';
import { migrate } from './migrations.js';
import { isRetryable, notReady, toStoreError, unavailableCode } from './errors.js';
import { reposFor } from './repos/index.js';
import { startChangeFeed, type ChangeFeed, type FeedLog } from './change-feed.js';
import { inOrder, writeBehind } from './sql.js';
import { postgresReplicaSet } from './replica-set.js';
import { aloneReplicaSet } from '../replicas.js';

export type PostgresStoreOptions = PoolOptions & {
  /** Where the change feed says it lost or regained its connection, or that a change was not seen everywhere in time. */
  log?: FeedLog;
};

export interface PostgresStore extends Store {
  readonly engine: 'postgres';
  /** The pool, for tests and tools that inspect the database (never for domain code). */
  readonly pool: pg.Pool;
  /** This process's row in `replicas` (the change feed), or null without a feed. */
  replicaId(): string | null;
}

/** Whether `store` runs on PostgreSQL: tests that inspect the database reach its pool through this. */
export const isPostgresStore = (store: Store): store is PostgresStore => store.engine === 'postgres';

/** Runs of a unit that failed on a serialization failure or a deadlock (each rolled back whole). */
export const MAX_UNIT_ATTEMPTS = 3;
/** How long one readiness verdict is reused: a loop on /readyz costs one commit a second at most. */
const READY_REUSE_MS = 1_000;

/** A unit's statement failed and was caught inside it: PostgreSQL rolled the whole transaction back at COMMIT. */
export class UnitAbortedError extends Error {
  constructor() {
    super('a statement of the unit failed, so PostgreSQL rolled the unit back at COMMIT');
    this.name = 'UnitAbortedError';
  }
}

/**
 * Opens the pool and brings the schema up to date (under the migration lock). A server that cannot
 * be reached, or refuses the credentials, is a StoreOpenError naming the URL without its password.
 */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<PostgresStore> {
  let roundTrips = 0;
  const pool = createPool({
    ...options,
    onRoundTrip: (statement) => {
      roundTrips++;
      options.onRoundTrip?.(statement);
    },
  });
  let schema: SchemaState;
  let feed: ChangeFeed;
  try {
    schema = await migrate(pool);
    feed = await startChangeFeed({
      url: options.url,
      pool,
      connectTimeoutMs: options.connectTimeoutMs ?? 5_000,
      log: options.log,
    });
  } catch (error) {
    await pool.end().catch(() => {});
    throw new StoreOpenError(safeLocation(options.url), (error as Error).message, { cause: error });
  }
  return postgresStore(pool, schema, feed, () => roundTrips);
}

/** A store on a pool whose schema is migrated; without a change feed it remembers no read. */
export function postgresStore(
  pool: pg.Pool,
  schema: SchemaState,
  feed: ChangeFeed | null = null,
  roundTrips?: () => number,
): PostgresStore {
  let unfed = 0;
  const poolRepos = reposFor(pool);

  /**
   * Runs `fn` between `begin` and COMMIT on one connection, pipelined (sql.ts): BEGIN goes out with
   * the unit's first statements; the writes `fn` held back go out with the reads of `answer` and the
   * COMMIT, without waiting in between. A failure of `fn` or of its writes rolls it back; `answer` runs
   * with the COMMIT already on the wire, so its failure after its reads leaves the unit committed
   * (`Store.transact`). `end` ROLLBACK ends a unit that succeeded as a failed one (a rehearsal,
   * `Store.rehearse`).
   */
  const inTransaction = async <W, T>(
    begin: string,
    fn: (r: Repos) => Promise<W>,
    answer?: (r: Repos, work: W) => Promise<T>,
    end: 'COMMIT' | 'ROLLBACK' = 'COMMIT',
  ): Promise<T> => {
    const client = await pool.connect();
    let broken: Error | undefined;
    // The unit's statements in the order started, its end behind all of them (sql.ts, inOrder).
    const ordered = inOrder(client);
    try {
      // The unit's writes whose result it does not read go out together (sql.ts, writeBehind).
      const sql = writeBehind(ordered);
      sql.soon!({ text: begin });
      const repos = reposFor(sql);
      const work = await fn(repos);
      // The answer's reads follow the held-back writes; the COMMIT follows them, sent before any answer.
      const answered = answer ? answer(repos, work) : Promise.resolve(work as unknown as T);
      answered.catch(() => {});
      const written = sql.flush();
      const commit = ordered.end(end);
      await written;
      const value = await answered;
      // The end is awaited whatever it is, so the connection goes back to the pool with nothing in flight;
      // an end that failed (a ROLLBACK on a lost connection) closes the connection rather than reuse it.
      const ended = await commit.catch((error: Error) => {
        broken = error;
        throw error;
      });
      // COMMIT of a transaction a failed statement aborted answers ROLLBACK, not an error.
      if (end === 'COMMIT' && ended.command === 'ROLLBACK') throw new UnitAbortedError();
      return value;
    } catch (error) {
      // A connection that lost its server, or cannot roll back, is closed rather than reused. The
      // ROLLBACK goes behind the statements the unit started before it failed (siblings in a
      // Promise.all), and is answered after them; after a COMMIT already sent, nothing more is sent.
      if (unavailableCode(error) !== null) broken = error as Error;
      else await ordered.end('ROLLBACK').catch((rollbackError: Error) => (broken = rollbackError));
      throw error;
    } finally {
      client.release(broken);
    }
  };

  const transact = async <W, T>(
    fn: (tx: Repos) => Promise<W>,
    answer?: (tx: Repos, work: W) => Promise<T>,
    end: 'COMMIT' | 'ROLLBACK' = 'COMMIT',
  ): Promise<T> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await inTransaction('BEGIN', fn, answer, end);
      } catch (error) {
        if (isRetryable(error) && attempt < MAX_UNIT_ATTEMPTS) continue;
        throw toStoreError(error);
      }
    }
  };

  let readiness: { at: number; check: Promise<void> } | null = null;
  const checkReady = async (): Promise<void> => {
    try {
      await pool.query({
        name: 'store.readiness',
        text: 'INSERT INTO readiness_probe (id, checked_at) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET checked_at = excluded.checked_at',
        values: [new Date().toISOString()],
      });
    } catch (error) {
      throw error instanceof NotReadyError ? error : notReady(error);
    }
  };

  const readOne: Store['readOne'] = (fn) =>
    fn(poolRepos).catch((error: unknown) => Promise.reject(toStoreError(error)));

  return {
    engine: 'postgres',
    schema,
    pool,
    // Without a feed nobody hears this process: it is alone, as far as it can tell.
    replicas: feed ? postgresReplicaSet(pool, feed) : aloneReplicaSet(),
    replicaId: () => feed?.replicaId ?? null,
    transact: transact as Store['transact'],
    rehearse: (<W, T>(fn: (tx: Repos) => Promise<W>, answer?: (tx: Repos, work: W) => Promise<T>) =>
      transact(fn, answer, 'ROLLBACK')) as Store['rehearse'],
    snapshot: <T>(fn: (r: Repos) => Promise<T>) =>
      inTransaction<T, T>('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY', fn).catch((error: unknown) =>
        Promise.reject(toStoreError(error)),
      ),
    // One statement on whichever connection is free: its own snapshot.
    readOne,
    // A replay's reads are one statement each here (repos/lead-views.ts): a readOne.
    readCommitted: readOne,
    ...(roundTrips ? { roundTrips } : {}),
    changeGeneration: () => (feed ? feed.generation() : ++unfed),
    awaitChangeSeen: () => (feed ? feed.awaitSeen() : Promise.resolve([])),
    checkReady() {
      // Concurrent and back-to-back checks share one verdict for a second.
      if (readiness === null || Date.now() - readiness.at > READY_REUSE_MS)
        readiness = { at: Date.now(), check: checkReady() };
      return readiness.check;
    },
    async close() {
      await feed?.close();
      await pool.end();
    },
  };
}
