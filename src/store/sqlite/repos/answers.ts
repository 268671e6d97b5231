// The answer log in SQLite.
import type { Db } from '../connection.js';
import type { AnswerRepo } from '../../repos/answers.js';
import { rowToAnswer as decodedRowToAnswer, type AnswerRow as DecodedAnswerRow } from '../../sql-rows.js';

/** The row as SQLite holds it: the raw value as JSON text. */
type AnswerRow = Omit<DecodedAnswerRow, 'raw_value'> & { raw_value: string };

const rowToAnswer = (r: AnswerRow) => decodedRowToAnswer({ ...r, raw_value: JSON.parse(r.raw_value) });

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
