// The answer log: every answer received, with its event, raw value and outcome. SQL only.
import type { Db } from '../db/connection.js';

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

interface AnswerRow {
  id: string;
  submission_id: string;
  integration_id: string;
  lead_id: string;
  answer_key: string;
  raw_value: string;
  outcome: AnswerOutcome;
  error: string | null;
  field_id: string | null;
  created_at: string;
  applied_at: string | null;
  applied_outcome: AnswerOutcome | null;
}

const rowToAnswer = (r: AnswerRow): StoredAnswer => ({
  id: r.id,
  submissionId: r.submission_id,
  integrationId: r.integration_id,
  leadId: r.lead_id,
  key: r.answer_key,
  raw: JSON.parse(r.raw_value),
  outcome: r.outcome,
  error: r.error,
  fieldId: r.field_id,
  createdAt: r.created_at,
  appliedAt: r.applied_at,
  appliedOutcome: r.applied_outcome,
});

export function sqliteAnswerRepo(db: Db): AnswerRepo {
  const insert = db.prepare(
    `INSERT INTO answers (id, submission_id, integration_id, lead_id, answer_key, raw_value, outcome, error, field_id, created_at)
     VALUES (@id, @submissionId, @integrationId, @leadId, @key, @raw, @outcome, @error, @fieldId, @createdAt)`,
  );
  const pending = db.prepare<[string], AnswerRow>(
    `SELECT * FROM answers WHERE integration_id = ? AND outcome = 'unmapped' AND applied_at IS NULL ORDER BY created_at, rowid`,
  );
  const mark = db.prepare('UPDATE answers SET applied_at = ?, applied_outcome = ?, field_id = ?, error = ? WHERE id = ?');
  return {
    insert: async (a) => void insert.run({ ...a, raw: JSON.stringify(a.raw) }),
    listPendingUnmapped: async (integrationId) => pending.all(integrationId).map(rowToAnswer),
    markApplied: async (id, at, outcome, fieldId, error) => void mark.run(at, outcome, fieldId, error, id),
  };
}
