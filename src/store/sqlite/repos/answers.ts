// The answer log in SQLite.
import type { Db } from '../connection.js';
import type { AnswerOutcome, AnswerRepo, StoredAnswer } from '../../repos/answers.js';

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
