// The answer log in PostgreSQL.
import type { AnswerRepo } from '../../repos/answers.js';
import { rowToAnswer, type AnswerRow } from '../../sql-rows.js';
import { rowName, statement, type Sql } from '../sql.js';

const insert = statement(
  'answers.insert',
  `INSERT INTO answers (id, submission_id, integration_id, lead_id, answer_key, raw_value, outcome, error, field_id, created_at)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
);
// Ties of created_at in insertion order: ids are time-ordered, as SQLite's rowid is.
const pending = statement<AnswerRow>(
  'answers.pending',
  "SELECT * FROM answers WHERE integration_id = $1 AND outcome = 'unmapped' AND applied_at IS NULL ORDER BY created_at, id",
);
const mark = statement('answers.mark', 'UPDATE answers SET applied_at = $1, applied_outcome = $2, field_id = $3, error = $4 WHERE id = $5');

export function pgAnswerRepo(sql: Sql): AnswerRepo {
  return {
    insert: (a) =>
      insert.later(sql, [rowName('answers', a.id)], undefined, a.id, a.submissionId, a.integrationId, a.leadId, a.key, JSON.stringify(a.raw), a.outcome, a.error, a.fieldId, a.createdAt),
    listPendingUnmapped: async (integrationId) => (await pending.rows(sql, integrationId)).map(rowToAnswer),
    markApplied: (id, at, outcome, fieldId, error) => mark.later(sql, [rowName('answers', id)], undefined, at, outcome, fieldId, error, id),
  };
}
