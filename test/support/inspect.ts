// What tests ask of the database behind a store, as named questions: no SQL in test files. Each
// engine answers them through a hook of its own (SQLite: its connection); `inspect` picks it.
import type { Store } from '../../src/store/store.js';
import { isSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { sqliteInspector } from './sqlite-inspector.js';
import { isPostgresStore } from '../../src/store/postgres/postgres-store.js';
import { postgresInspector } from './postgres-inspector.js';

export type Value = string | number | boolean | null;
/** A member equals a value, matches a LIKE pattern (`%` any text), or is one of several values. */
export type Condition = Value | { like: string } | { in: readonly Value[] };
/** Conditions on a record's members, by their domain names (`eventId`, `leadId`, ...), all of them true. */
export type Where = Record<string, Condition>;

export interface Records {
  count(where?: Where): Promise<number>;
  /** The named members of the matching records, ordered by those members in turn; JSON members parsed. */
  list(where: Where, members: readonly string[]): Promise<Record<string, unknown>[]>;
}

export interface Inspector {
  leads: Records;
  contacts: Records;
  submissions: Records;
  /** The answer log; `submissionEndpoint` is the endpoint of the submission an answer came with. */
  answers: Records;
  fieldValues: Records;
  leadPayments: Records;
  /** Every row of a table, each as an array of its values, in a stable order (for fingerprints). */
  dump(table: string): Promise<unknown[][]>;
  /** Makes the database refuse every write from now on (as a disk that stopped taking them), or take them again. */
  refuseWrites(refuse: boolean): Promise<void>;
  /** Removes tables under the running store: its next unit that touches them fails with a fault, not a storage failure. */
  dropTables(...tables: string[]): Promise<void>;
  /**
   * Deletes a person's row alone, leaving the rows that name it (its bindings, its leads): what a file
   * edited or copied with its foreign keys off can hold.
   */
  removeContact(id: string): Promise<void>;
  /**
   * Runs `work` while `table` cannot be read, then makes it readable again: on PostgreSQL another
   * session holds its lock (a read waits for the statement timeout, then is a storage failure, 503);
   * on SQLite, where a read waits for no lock, the table is renamed away (a read of it is a fault).
   */
  whileUnreadable<T>(table: string, work: () => Promise<T>): Promise<T>;
}

export function inspect(store: Store): Inspector {
  if (isSqliteStore(store)) return sqliteInspector(store);
  if (isPostgresStore(store)) return postgresInspector(store);
  throw new Error(`no inspector for the ${String((store as Store).engine)} engine`);
}
