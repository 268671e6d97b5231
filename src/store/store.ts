// The asynchronous store interface the domain code sees, and the store's own errors. Each engine
// (src/store/sqlite/ today) implements it and translates its failures into these errors; nothing
// outside src/store knows which engine runs.
import type { ContactRepo } from './repos/contacts.js';
import type { LeadRepo } from './repos/leads.js';
import type { SubmissionRepo } from './repos/submissions.js';
import type { KeyRepo } from './repos/keys.js';
import type { FieldValueRepo } from './repos/field-values.js';
import type { AnswerRepo } from './repos/answers.js';
import type { StateRepo } from './repos/states.js';
import type { LegacyTagRepo } from './repos/legacy-tags.js';
import type { AdminCredentialRepo } from './repos/admin-credentials.js';
import type { LeadPageRepo } from './repos/lead-pages.js';
import type { LockRepo } from './repos/locks.js';
import type { HoldRepo } from './repos/holds.js';
import type { LeadViewRepo } from './repos/lead-views.js';
import type { ConsoleSessionRepo, ConsoleUserRepo } from './repos/console.js';
import type { ScheduleRepo } from './repos/schedules.js';
import type { BrownoutRepo } from './repos/brownouts.js';
import type { TestMatchRepo } from './repos/test-matches.js';
import type { WebhookRepo } from './repos/webhooks.js';
import type { ReplicaSet } from './replicas.js';

/** The repositories reachable inside a read or a unit of work. */
export interface Repos {
  contacts: ContactRepo;
  leads: LeadRepo;
  submissions: SubmissionRepo;
  keys: KeyRepo;
  fieldValues: FieldValueRepo;
  answers: AnswerRepo;
  states: StateRepo;
  legacyTags: LegacyTagRepo;
  adminCredentials: AdminCredentialRepo;
  leadPages: LeadPageRepo;
  leadViews: LeadViewRepo;
  consoleUsers: ConsoleUserRepo;
  consoleSessions: ConsoleSessionRepo;
  /** Live persons that test calls found (docs/api.md, "Test mode"). */
  testMatches: TestMatchRepo;
  schedules: ScheduleRepo;
  /** Webhook endpoints, the outbox of events and their deliveries (docs/webhooks.md). */
  webhooks: WebhookRepo;
  /** Brownout windows set through the admin API, the CLI or the console (the rules' are in the rules). */
  brownouts: BrownoutRepo;
  /** Locks a unit takes before it reads what it decides on; meaningful only inside `transact` (repos/locks.ts). */
  locks: LockRepo;
  /** A submitted person and its latest lead, found and locked at once; inside `transact` only, PostgreSQL refuses it elsewhere (repos/holds.ts). */
  holds: HoldRepo;
}

/** The engines a store can run on; `openStore` (open-store.ts) picks one from the configuration. */
export type StoreEngine = 'sqlite' | 'postgres';

/** The schema version of the database, and which migrations this process applied when it opened it. */
export interface SchemaState {
  version: number;
  /** Empty when the database was up to date (or another replica migrated it first). */
  applied: number[];
}

export interface Store {
  readonly engine: StoreEngine;
  readonly schema: SchemaState;
  /**
   * Runs a unit of work in a write transaction and resolves only after its commit is durable.
   * If `fn` throws, its writes are undone and nothing else is affected. A unit must not wait on
   * anything but its `tx` (no network calls inside a unit).
   *
   * Concurrency. Units of several processes may run at once (PostgreSQL: READ COMMITTED, each unit on
   * its own connection; a deadlock or serialization failure reruns the whole unit a bounded number of
   * times). A unit that reads, decides and writes first locks what it decides on, so that it decides
   * as if the units had run one after the other:
   * - person matching (match, then create or bind): `locks.persons` on the submitted keys (binding,
   *   phone, e-mail), then `contacts.lock` on the person found, then `leads.lock` on the lead it joins;
   * - a field write (read the value, apply the conflict rule, write) and an operator's or a bot's
   *   action on a lead (ownership checked in the same unit): `leads.lock` on the lead;
   * - an integration's key or state change (read the state, then set it, audit): `locks.integration`;
   * - a comment on a lead (count the lead's comments against their caps, then add one): `leads.lock`;
   * - a tag a bot creates (count the workspace's created tags against their cap, then add one):
   *   `locks.legacyTags` on the workspace (the only lock that unit takes);
   * - a key import (is the key known? insert it): `keys.insert` answers false for a known hash, the
   *   database's uniqueness deciding; `contacts.bind` likewise tells a binding that exists already.
   * Locks are taken in that order (integration, person keys, contact, lead) and held until the unit
   * ends. On SQLite units run one at a time on the one writer, so the locks cost nothing there.
   */
  transact<T>(fn: (tx: Repos) => Promise<T>): Promise<T>;
  /**
   * A unit of work whose answer is read last: `answer` runs after `fn`, in the same transaction, and
   * sees its writes. On PostgreSQL what `answer` sends before its first await goes out with the
   * unit's held-back writes and its COMMIT, in one round trip (docs/architecture.md, "How a unit is
   * sent on PostgreSQL"): `answer` makes its reads at once (one statement, as `renderLead` does), a
   * statement it starts after an await is refused (UnitEndedError), and should it throw after its
   * reads the unit stands committed (a resend is a replay). On SQLite it simply runs after `fn`.
   */
  transact<W, T>(fn: (tx: Repos) => Promise<W>, answer: (tx: Repos, work: W) => Promise<T>): Promise<T>;
  /**
   * Runs a unit of work exactly as `transact` does (same locks, same statements, same checks by the
   * database) and then always undoes it: what `fn` returns is what the unit would have answered, and
   * nothing of it stands. v1's test mode (docs/api.md, "Test mode") answers with it.
   */
  rehearse<T>(fn: (tx: Repos) => Promise<T>): Promise<T>;
  /** As `transact` with an answer read last, then undone. */
  rehearse<W, T>(fn: (tx: Repos) => Promise<W>, answer: (tx: Repos, work: W) => Promise<T>): Promise<T>;
  /** Runs reads against committed data only, all of them in one snapshot. */
  snapshot<T>(fn: (r: Repos) => Promise<T>): Promise<T>;
  /**
   * Runs a single statement against committed data without opening a read transaction: one statement
   * is its own snapshot. For the look-ups every request makes (key, ledger row, state). `fn` must make
   * exactly one statement, before its first await: on SQLite a readOne runs on the writer between units,
   * and a second statement could meet the next unit's open transaction. Several reads go to `readCommitted`.
   */
  readOne<T>(fn: (r: Repos) => Promise<T>): Promise<T>;
  /**
   * Runs reads against committed data, each statement promised only that: no snapshot is shared
   * between them. For the reads of one answer at the engine's lowest cost (a replay: the event's lead
   * with its parts). On SQLite, where a lead's parts are several statements, they share one read
   * transaction (a `snapshot`); on PostgreSQL, where a replay's reads are one statement each, each is
   * a `readOne` of its own.
   */
  readCommitted<T>(fn: (r: Repos) => Promise<T>): Promise<T>;
  /**
   * Round trips to the database server so far, from this process (PostgreSQL; absent on an engine in
   * the process): a statement sent while none of its connection's statements awaited an answer.
   */
  roundTrips?(): number;
  /**
   * Throws a NotReadyError unless a real write commits now and the disk has room for more: what
   * /readyz reports.
   */
  checkReady(): Promise<void>;
  /**
   * A number that moves whenever another process (a replica, the CLI) may have changed keys or
   * migration states: reads remembered under an older number are stale (src/store/hot-reads.ts).
   */
  changeGeneration(): number;
  /**
   * After a commit that changed keys or migration states: resolves once every other live process has
   * applied it to its remembered reads, so their very next request sees it (bounded: it answers, with
   * the processes still behind, after two seconds at most; an engine of one file resolves at once).
   */
  awaitChangeSeen(): Promise<string[]>;
  /**
   * The gateway processes on this database (this one included), the rules each records it runs, and
   * requests to reload rules that reach every one of them (replicas.ts). One file: this process alone.
   */
  readonly replicas: ReplicaSet;
  close(): Promise<void>;
}

/** Why the store cannot take writes now; `reason` is safe to show, the cause goes to the log. */
export class NotReadyError extends Error {
  constructor(
    readonly reason: 'read-only' | 'disk-full' | 'io-error' | 'unavailable',
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(detail, options);
    this.name = 'NotReadyError';
  }
}

/**
 * The engine could not commit or read (disk or I/O error, disk full, a lock held too long, a lost
 * connection): the unit was rolled back and nothing of it stands, so the client may resend it.
 */
export class StoreUnavailableError extends Error {
  /**
   * Whether the database may still answer a read: false when the server or the connection to it is
   * lost (a read would wait out its own timeout), true when a write was refused (a full disk, a
   * read-only database) or a statement timed out.
   */
  readonly mayRead: boolean;

  constructor(
    detail: string,
    /** The engine's own code of the failure (SQLITE_FULL, ...), for the log. */
    readonly engineCode: string | null,
    options?: { cause?: unknown; mayRead?: boolean },
  ) {
    super(detail, options);
    this.name = 'StoreUnavailableError';
    this.mayRead = options?.mayRead ?? true;
  }
}

/** The database cannot be opened at all; `problem` says what to fix, in words for an operator. */
export class StoreOpenError extends Error {
  constructor(
    /** Where the database is (a file's absolute path), never a password. */
    readonly location: string,
    readonly problem: string,
    options?: { cause?: unknown },
  ) {
    super(`cannot open the database ${location}: ${problem}`, options);
    this.name = 'StoreOpenError';
  }
}

/**
 * Thrown by `submissions.insert` when another writer recorded the same event first (the uniqueness
 * of integration, endpoint and event_id, kept by the database): the caller answers with a replay.
 */
export class DuplicateEventError extends Error {
  constructor() {
    super('event_id already recorded');
    this.name = 'DuplicateEventError';
  }
}

/**
 * A statement started by a unit after its end (a sibling of a failed Promise.all, say), or by a
 * unit's answer after its first await (`transact(fn, answer)`): never run.
 */
export class UnitEndedError extends Error {
  constructor() {
    super('the unit of work had ended (committed or rolled back) when this statement was started: it was not sent');
    this.name = 'UnitEndedError';
  }
}

/** A reference a stored row holds: the row by its key, and the parent row it names. */
export interface StoredReference {
  table: string;
  /** The row's key, column by column. */
  key: Record<string, string>;
  column: string;
  /** The table the column names a row of, and the id it names there. */
  parent: string;
  missing: string;
}

/**
 * A stored row names a row its parent table does not hold: a reference no foreign key kept (a file
 * edited or copied with its foreign keys off; PostgreSQL keeps none on the rows a new lead writes,
 * docs/architecture.md). Nothing the request sends can change it, so it is told as what it is, by the
 * row and the id, instead of failing later on as a fault that names neither; the unit was rolled back.
 */
export class BrokenReferenceError extends Error {
  constructor(readonly reference: StoredReference) {
    const key = Object.entries(reference.key)
      .map(([column, value]) => `${column} ${JSON.stringify(value)}`)
      .join(', ');
    super(
      `the ${reference.table} row (${key}) names ${reference.column} ${JSON.stringify(reference.missing)}, which ${reference.parent} does not hold`,
    );
    this.name = 'BrokenReferenceError';
  }
}

/** The binding of an external id whose person is not in `contacts`. */
export const brokenBinding = (integrationId: string, externalId: string, contactId: string): BrokenReferenceError =>
  new BrokenReferenceError({
    table: 'contact_bindings',
    key: { integration_id: integrationId, external_contact_id: externalId },
    column: 'contact_id',
    parent: 'contacts',
    missing: contactId,
  });
