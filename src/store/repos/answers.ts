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

export interface AnswerRepo {
  insert(answer: StoredAnswer): Promise<void>;
  /** Unmapped answers of the integration not yet applied, oldest first. */
  listPendingUnmapped(integrationId: string): Promise<StoredAnswer[]>;
  markApplied(id: string, at: string, outcome: AnswerOutcome, fieldId: string | null, error: string | null): Promise<void>;
}
