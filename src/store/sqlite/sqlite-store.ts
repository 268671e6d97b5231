// The SQLite store: one writer connection committing units of work in groups, one reader connection.
import { statfsSync } from 'node:fs';
import { dirname } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers';
import { explainOpenFailure, openDatabase, type Db, type Synchronous } from './connection.js';
import { migrate } from './migrations.js';
import { notReady, toStoreError } from './errors.js';
import { NotReadyError, UnitEndedError, type Repos, type SchemaState, type Store } from '../store.js';
import { aloneReplicaSet } from '../replicas.js';
import { sqliteContactRepo } from './repos/contacts.js';
import { sqliteLeadViewRepo } from './repos/lead-views.js';
import { sqliteScheduleRepo } from './repos/schedules.js';
import { sqliteWebhookRepo } from './repos/webhooks.js';
import { sqliteBrownoutRepo } from './repos/brownouts.js';
import { holdsInOrder } from '../repos/holds.js';
import { sqliteLeadRepo } from './repos/leads.js';
import { sqliteSubmissionRepo } from './repos/submissions.js';
import { sqliteKeyRepo } from './repos/keys.js';
import { sqliteFieldValueRepo } from './repos/field-values.js';
import { sqliteAnswerRepo } from './repos/answers.js';
import { sqliteStateRepo } from './repos/states.js';
import { sqliteLeadPageRepo } from './repos/lead-pages.js';
import { sqliteLegacyTagRepo } from './repos/legacy-tags.js';
import { sqliteAdminCredentialRepo } from './repos/admin-credentials.js';
import { sqliteLockRepo } from './repos/locks.js';
import { sqliteConsoleSessionRepo, sqliteConsoleUserRepo } from './repos/console.js';
import { sqliteTestMatchRepo } from './repos/test-matches.js';

export interface SqliteStoreOptions {
  path: string;
  synchronous: Synchronous;
  /** Most units of work committed together in one transaction. */
  maxBatch?: number;
  /** Free bytes the database's file system must keep for the store to report ready (default 64 MiB). */
  minFreeBytes?: number;
  /** Refuse to create a new database file (the CLI). */
  mustExist?: boolean;
}

const DEFAULT_MIN_FREE_BYTES = 64 * 1024 * 1024;
/** How long one readiness verdict is reused: a loop on /readyz costs one commit a second at most. */
const READY_REUSE_MS = 1_000;

const rethrowAsStoreError = (error: unknown): never => {
  throw toStoreError(error);
};

interface Unit {
  fn: (tx: Repos) => Promise<unknown>;
  /** Undone once run, answered all the same (`Store.rehearse`). */
  rehearsal: boolean;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

const reposFor = (db: Db): Repos => {
  const leads = sqliteLeadRepo(db);
  const fieldValues = sqliteFieldValueRepo(db);
  const contacts = sqliteContactRepo(db);
  const locks = sqliteLockRepo();
  return {
    contacts,
    leads,
    submissions: sqliteSubmissionRepo(db),
    keys: sqliteKeyRepo(db),
    fieldValues,
    answers: sqliteAnswerRepo(db),
    states: sqliteStateRepo(db),
    legacyTags: sqliteLegacyTagRepo(db),
    adminCredentials: sqliteAdminCredentialRepo(db),
    leadPages: sqliteLeadPageRepo(db),
    leadViews: sqliteLeadViewRepo(leads, fieldValues),
    consoleUsers: sqliteConsoleUserRepo(db),
    consoleSessions: sqliteConsoleSessionRepo(db),
    testMatches: sqliteTestMatchRepo(db),
    schedules: sqliteScheduleRepo(db),
    webhooks: sqliteWebhookRepo(db),
    brownouts: sqliteBrownoutRepo(db),
    locks,
    holds: holdsInOrder({ contacts, leads, fieldValues, locks }),
  };
};

export interface SqliteStore extends Store {
  readonly engine: 'sqlite';
  /** The writer connection, for tests and tools that inspect the file (never for domain code). */
  readonly db: Db;
}

/** Whether `store` runs on SQLite: tests that inspect the file reach its connection through this. */
export const isSqliteStore = (store: Store): store is SqliteStore => store.engine === 'sqlite';

/** The writer (schema migrated) and the reader; any failure is told as what to fix (StoreOpenError). */
function openConnections(options: SqliteStoreOptions): { writer: Db; reader: Db; schema: SchemaState } {
  let writer: Db | undefined;
  try {
    writer = openDatabase(options.path, { synchronous: options.synchronous, mustExist: options.mustExist ?? false });
    const applied = migrate(writer);
    const schema = { version: writer.pragma('user_version', { simple: true }) as number, applied };
    const reader =
      options.path === ':memory:'
        ? writer
        : openDatabase(options.path, { synchronous: options.synchronous, readonly: true });
    return { writer, reader, schema };
  } catch (error) {
    writer?.close();
    throw explainOpenFailure(options.path, error);
  }
}

/**
 * Every write is a unit of work queued here. Units that arrive while a commit is in progress are
 * committed together: one BEGIN IMMEDIATE, each unit in its own SAVEPOINT (so a failing unit undoes
 * only itself), one COMMIT, and only then is any of them answered. The fsync per commit is the
 * throughput wall at synchronous=FULL; grouping spreads it over every request waiting for it.
 */
export function openSqliteStore(options: SqliteStoreOptions): SqliteStore {
  const maxBatch = options.maxBatch ?? 256;
  const { writer, reader, schema } = openConnections(options);
  const writeRepos = reposFor(writer);
  const readRepos = reader === writer ? writeRepos : reposFor(reader);

  // Reads in flight share one read transaction on the reader connection: one snapshot, and one check
  // of the WAL (which empties the page cache after any commit) instead of one per statement.
  const readTxn = reader === writer ? null : { begin: reader.prepare('BEGIN'), end: reader.prepare('COMMIT') };
  let activeReads = 0;
  // data_version of a connection changes only when *another* connection commits; the reader never
  // writes, so on the writer it moves exactly when another process (the CLI) changed the file.
  const dataVersion = writer.prepare('PRAGMA data_version').pluck();
  let seenVersion = dataVersion.get() as number;
  let generation = 0;

  const probe = writer.prepare(
    'INSERT INTO readiness_probe (id, checked_at) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET checked_at = excluded.checked_at',
  );
  const minFreeBytes = options.minFreeBytes ?? DEFAULT_MIN_FREE_BYTES;
  let readiness: { at: number; check: Promise<void> } | null = null;
  const checkReady = async (): Promise<void> => {
    if (options.path !== ':memory:') {
      // A write that fits into pages the WAL already holds still commits on a full disk, so the free
      // space is checked too: below the floor the next checkpoint or a larger unit fails.
      const fs = statfsSync(dirname(options.path));
      const free = fs.bavail * fs.bsize;
      if (free < minFreeBytes)
        throw new NotReadyError(
          'disk-full',
          `The disk of the database has ${free} bytes free, below the ${minFreeBytes} it must keep.`,
        );
    }
    try {
      await enqueue(async () => void probe.run(new Date().toISOString()));
    } catch (error) {
      throw notReady(error);
    }
  };

  const pending: Unit[] = [];
  let draining: Promise<void> | null = null;
  let closed = false;

  const runBatch = async (batch: Unit[]): Promise<void> => {
    const results: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
    try {
      writer.exec('BEGIN IMMEDIATE');
    } catch (error) {
      for (const unit of batch) unit.reject(error);
      return;
    }
    for (const unit of batch) {
      writer.exec('SAVEPOINT unit');
      try {
        const value = await unit.fn(writeRepos);
        // A rehearsal is undone like a failed unit, but answered with its value.
        if (unit.rehearsal) writer.exec('ROLLBACK TO unit');
        writer.exec('RELEASE unit');
        results.push({ ok: true, value });
      } catch (error) {
        if (!writer.inTransaction) {
          // SQLite rolled the whole transaction back (I/O error, disk full): nothing of the batch stands.
          for (const u of batch) u.reject(error);
          return;
        }
        writer.exec('ROLLBACK TO unit');
        writer.exec('RELEASE unit');
        results.push({ ok: false, error });
      }
    }
    try {
      writer.exec('COMMIT');
    } catch (error) {
      if (writer.inTransaction) writer.exec('ROLLBACK');
      for (const unit of batch) unit.reject(error);
      return;
    }
    batch.forEach((unit, i) => {
      const result = results[i]!;
      if (result.ok) unit.resolve(result.value);
      else unit.reject(result.error);
    });
  };

  const drain = async (): Promise<void> => {
    // Let the requests that arrived in the same turn join the first group.
    await new Promise<void>((resolve) => nextTurn(resolve));
    while (pending.length > 0) await runBatch(pending.splice(0, maxBatch));
    draining = null;
  };

  const enqueue = <T>(fn: (tx: Repos) => Promise<T>, rehearsal = false): Promise<T> => {
    if (closed) return Promise.reject(new Error('store is closed'));
    return new Promise<T>((resolve, reject) => {
      pending.push({ fn, rehearsal, resolve: resolve as (value: unknown) => void, reject });
      draining ??= drain();
    });
  };

  const readInSnapshot = async <T>(fn: (r: Repos) => Promise<T>): Promise<T> => {
    if (readTxn === null) return fn(readRepos);
    if (activeReads++ === 0) readTxn.begin.run();
    try {
      return await fn(readRepos);
    } finally {
      if (--activeReads === 0) readTxn.end.run();
    }
  };

  /**
   * The repositories a unit's `answer` reads through: as on PostgreSQL, where the COMMIT goes out behind
   * what the answer sends before its first await, a statement it starts later is refused
   * (UnitEndedError), so an answer that breaks the rule fails on this engine's runs too.
   */
  const answerRepos = (tx: Repos): Repos => {
    let open = true;
    queueMicrotask(() => (open = false));
    const guard = <R extends object>(repo: R): R =>
      new Proxy(repo, {
        get(target, name, receiver) {
          const member = Reflect.get(target, name, receiver) as unknown;
          if (typeof member !== 'function') return member;
          return (...args: unknown[]) =>
            open ? (member as (...a: unknown[]) => unknown).apply(target, args) : Promise.reject(new UnitEndedError());
        },
      });
    // Each repository wrapped when the answer reaches for it: an answer reads one or two.
    return new Proxy(tx, { get: (target, name) => guard(Reflect.get(target, name) as object) });
  };

  // The repositories are wrapped once `fn` is done: the answer's first turn starts there.
  const answerAfter = <W, T>(tx: Repos, work: W, answer: (tx: Repos, work: W) => Promise<T>): Promise<T> =>
    answer(answerRepos(tx), work);

  const store: SqliteStore = {
    db: writer,
    engine: 'sqlite',
    schema,
    transact: <W, T>(fn: (tx: Repos) => Promise<W>, answer?: (tx: Repos, work: W) => Promise<T>) =>
      enqueue<unknown>(answer ? async (tx) => answerAfter(tx, await fn(tx), answer) : fn).catch(
        rethrowAsStoreError,
      ) as Promise<T>,
    // Its own savepoint in the group, rolled back: the units around it commit as ever.
    rehearse: <W, T>(fn: (tx: Repos) => Promise<W>, answer?: (tx: Repos, work: W) => Promise<T>) =>
      enqueue<unknown>(answer ? async (tx) => answerAfter(tx, await fn(tx), answer) : fn, true).catch(
        rethrowAsStoreError,
      ) as Promise<T>,
    snapshot: (fn) => readInSnapshot(fn).catch(rethrowAsStoreError),
    // Several statements (a lead and its parts): one read transaction costs less than a snapshot each.
    readCommitted: (fn) => store.snapshot(fn),
    async readOne(fn) {
      // Inside a shared read transaction it simply joins that snapshot. Otherwise it runs on the writer
      // when no unit is open there: every commit empties the reader's page cache, while the writer's
      // survives its own commits, so the look-ups every request makes find their pages in memory. The
      // writer is chosen only while no unit is open, and a readOne's one statement runs at this call,
      // synchronously: it reads committed data only. (A second statement after an await could meet
      // the next group's BEGIN, which the drain may start in the same turn: hence one statement, and
      // several reads go to `readCommitted`.) A readOne made inside a unit reads on the reader.
      return fn(activeReads > 0 || writer.inTransaction ? readRepos : writeRepos).catch(rethrowAsStoreError);
    },
    changeGeneration() {
      const version = dataVersion.get() as number;
      if (version !== seenVersion) {
        seenVersion = version;
        generation++;
      }
      return generation;
    },
    // Another process on the file checks data_version on its every look-up: it sees a commit at once.
    awaitChangeSeen: async () => [],
    // One process serves a file (a CLI command beside it runs no rules): it answers for itself alone.
    replicas: aloneReplicaSet(),
    checkReady() {
      // Concurrent and back-to-back checks share one verdict for a second.
      if (readiness === null || Date.now() - readiness.at > READY_REUSE_MS)
        readiness = { at: Date.now(), check: checkReady() };
      return readiness.check;
    },
    async close() {
      closed = true;
      while (draining) await draining;
      if (reader !== writer) reader.close();
      writer.close();
    },
  };
  return store;
}
