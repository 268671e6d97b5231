// The answer log: the statements both engines run as written. Each engine keeps its own reads of a list
// of keys (JSON on SQLite, an array on PostgreSQL), orders of ties (SQLite's rowid), counts (PostgreSQL's
// casts), kept-count upserts (max against greatest; one statement of arrays on PostgreSQL) and expiry.
import { statements } from './shared.js';

export const answerStatements = statements('answers', {
  // The raw value as JSON text, which PostgreSQL's jsonb column parses.
  insert: `INSERT INTO answers (id, submission_id, integration_id, lead_id, answer_key, raw_value, outcome, error, field_id, created_at)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
  // A number on SQLite, a bigint handed over as text on PostgreSQL: each engine reads its own.
  notKept: 'SELECT answers FROM answers_not_kept WHERE integration_id = $1',
  mark: 'UPDATE answers SET applied_at = $1, applied_outcome = $2, field_id = $3, error = $4 WHERE id = $5',
});
