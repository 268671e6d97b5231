// Live persons that test calls found (docs/api.md, "Test mode"): one row per test key and person, so
// that every such look-up is attributable afterwards (which key, which person, when).

/** How a test call found the person: the v1 outcome's `matched_by`, or the answers call's binding. */
export type TestMatchedBy = 'external_contact_id' | 'phone' | 'email';

/** One test call that found a live person, as the gateway records it after the call's rollback. */
export interface TestMatch {
  integrationId: string;
  keyId: string;
  contactId: string;
  /** The person's lead the call would have joined or answered (null: the person has no live lead). */
  leadId: string | null;
  endpoint: 'leads' | 'answers';
  eventId: string;
  matchedBy: TestMatchedBy;
  /** Whether the integration itself had submitted the person (its binding, or the lead is its own). */
  own: boolean;
  at: string;
}

/** The row of one key and person: its first and last test call, and how many there were. */
export interface TestMatchEntry extends Omit<TestMatch, 'at' | 'integrationId'> {
  /** The key's readable prefix (null: the key is gone from the table). */
  keyPrefix: string | null;
  firstAt: string;
  lastAt: string;
  calls: number;
}

export interface TestMatchCursor {
  firstAt: string;
  keyId: string;
  contactId: string;
}

export interface TestMatchRepo {
  /**
   * Adds the call to the row of its key and person, or makes that row while the key has fewer than
   * `maxRows`: false when it would be a new row past that cap (nothing is written). Inside a unit that
   * holds the integration's lock, so that two replicas cannot both add the last row.
   */
  record(match: TestMatch, maxRows: number): Promise<boolean>;
  /**
   * The integration's rows, the newest made first (a row's first call never moves, so a row never
   * changes pages while someone reads them), `limit` of them after the cursor.
   */
  page(integrationId: string, limit: number, after: TestMatchCursor | null): Promise<TestMatchEntry[]>;
  /** How many rows (key and person) the integration has. */
  count(integrationId: string): Promise<number>;
  /** Deletes at most `limit` rows whose last call is older than `before`, the oldest first. */
  deleteBefore(before: string, limit: number): Promise<number>;
}
