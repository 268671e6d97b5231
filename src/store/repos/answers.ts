// The answer log: every answer received, with its event, raw value and outcome.

export type AnswerOutcome = 'written' | 'unchanged' | 'kept_existing' | 'unmapped' | 'invalid';

export interface StoredAnswer {
  id: string;
  submissionId: string;
  integrationId: string;
  leadId: string;
  key: string;
  raw: unknown;
  outcome: AnswerOutcome;
  error: string | null;
  fieldId: string | null;
  createdAt: string;
  appliedAt: string | null;
  appliedOutcome: AnswerOutcome | null;
}

/** One answer key no mapping took yet: how often it is waiting, when last, and a few of its values. */
export interface UnmappedKey {
  key: string;
  /** Stored unmapped answers of this key not yet applied. */
  count: number;
  lastSeen: string;
  /** Distinct raw values, the most recent first. */
  examples: unknown[];
}

export interface UnmappedSummary {
  keys: UnmappedKey[];
  /** Distinct keys among the answers scanned. */
  totalKeys: number;
  /** Answers scanned, the most recent first: when it equals the limit, older ones were not counted. */
  scanned: number;
}

/**
 * What an integration keeps of unmapped and invalid answers now, as counted beside the log: the
 * distinct keys and bytes in all, and the answers kept of each key asked about (absent: none).
 */
export interface KeptAnswers {
  keys: number;
  bytes: number;
  perKey: Map<string, number>;
}

/** Answers of one key a unit stored (or, negative, retention deleted), and their bytes. */
export interface KeptIncrement {
  integrationId: string;
  key: string;
  answers: number;
  bytes: number;
}

/** What an answer costs of an integration's byte cap: its key and its value as JSON, in UTF-8. */
export const answerBytes = (key: string, raw: unknown): number =>
  Buffer.byteLength(key) + Buffer.byteLength(JSON.stringify(raw) ?? 'null');

/** Folds deleted rows into one decrement per integration and key. */
export function expiredPerKey(rows: readonly { integrationId: string; key: string; raw: unknown }[]): ExpiredAnswers {
  const perKey = new Map<string, KeptIncrement>();
  for (const r of rows) {
    const id = JSON.stringify([r.integrationId, r.key]);
    let entry = perKey.get(id);
    if (!entry) perKey.set(id, (entry = { integrationId: r.integrationId, key: r.key, answers: 0, bytes: 0 }));
    entry.answers--;
    entry.bytes -= answerBytes(r.key, r.raw);
  }
  return { deleted: rows.length, perKey: [...perKey.values()] };
}

/** Unmapped and invalid answers deleted by one retention run, per integration and key. */
export interface ExpiredAnswers {
  deleted: number;
  perKey: KeptIncrement[];
}

export interface AnswerRepo {
  insert(answer: StoredAnswer): Promise<void>;
  /** Unmapped answers of the integration not yet applied whose key is one of `keys`, oldest first, at most `limit`. */
  listPendingUnmapped(integrationId: string, keys: readonly string[], limit: number): Promise<StoredAnswer[]>;
  /** How many unmapped answers of the integration wait: with a key of `keys`, and with any other. */
  countPendingUnmapped(integrationId: string, keys: readonly string[]): Promise<{ withKeys: number; others: number }>;
  /**
   * The integration's most recent `scan` pending unmapped answers grouped by key, the most frequent
   * first: at most `keys` keys with at most `examples` values each, and how many distinct keys in all.
   */
  summarizePendingUnmapped(
    integrationId: string,
    limits: { keys: number; examples: number; scan: number },
  ): Promise<UnmappedSummary>;
  /** The integration's kept unmapped and invalid answers (src/answers/keep.ts): one statement. */
  kept(integrationId: string, keys: readonly string[]): Promise<KeptAnswers>;
  /**
   * Moves the kept counts by the increments (negative after retention); a key whose count reaches 0
   * is no longer counted among the integration's keys.
   */
  addKept(increments: readonly KeptIncrement[]): Promise<void>;
  /** Counts answers that were not kept past the caps. */
  addNotKept(integrationId: string, answers: number, at: string): Promise<void>;
  /** Answers not kept past the caps, counted since the integration's first (0: none). */
  notKept(integrationId: string): Promise<number>;
  /**
   * Deletes at most `limit` unmapped and invalid answers stored before `before`, oldest first; says
   * which, so that their counts can be moved.
   */
  deleteExpired(before: string, limit: number): Promise<ExpiredAnswers>;
  markApplied(
    id: string,
    at: string,
    outcome: AnswerOutcome,
    fieldId: string | null,
    error: string | null,
  ): Promise<void>;
}
