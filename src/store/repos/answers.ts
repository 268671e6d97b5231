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
  summarizePendingUnmapped(integrationId: string, limits: { keys: number; examples: number; scan: number }): Promise<UnmappedSummary>;
  markApplied(id: string, at: string, outcome: AnswerOutcome, fieldId: string | null, error: string | null): Promise<void>;
}
