// The answer log in PostgreSQL.
import type { AnswerRepo } from '../../repos/answers.js';
import { foldUnmappedKeys, rowToAnswer, type AnswerRow, type UnmappedKeyRow } from '../../sql-rows.js';
import { rowName, statement, type Sql } from '../sql.js';

const insert = statement(
  'answers.insert',
  `INSERT INTO answers (id, submission_id, integration_id, lead_id, answer_key, raw_value, outcome, error, field_id, created_at)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
);
// Ties of created_at in insertion order: ids are time-ordered, as SQLite's rowid is.
const pending = statement<AnswerRow>(
  'answers.pending',
  "SELECT * FROM answers WHERE integration_id = $1 AND outcome = 'unmapped' AND applied_at IS NULL AND answer_key = ANY ($2::text[]) ORDER BY created_at, id LIMIT $3",
);
const counts = statement<{ with_keys: number; others: number }>(
  'answers.pendingCounts',
  `SELECT count(*) FILTER (WHERE answer_key = ANY ($2::text[]))::int AS with_keys, count(*) FILTER (WHERE NOT answer_key = ANY ($2::text[]))::int AS others
   FROM answers WHERE integration_id = $1 AND outcome = 'unmapped' AND applied_at IS NULL`,
);
// Walks the partial index answers_unmapped for the integration, newest first: only answers still
// waiting are read, and at most `scan` of them.
const summary = statement<UnmappedKeyRow>(
  'answers.unmappedSummary',
  `WITH pending AS (
     SELECT answer_key, raw_value, created_at FROM answers
     WHERE integration_id = $1 AND outcome = 'unmapped' AND applied_at IS NULL
     ORDER BY created_at DESC LIMIT $4
   ),
   top_keys AS (
     SELECT answer_key, count(*)::int AS n, max(created_at) AS last_seen FROM pending
     GROUP BY answer_key ORDER BY n DESC, answer_key LIMIT $2
   ),
   examples AS (
     SELECT answer_key, raw_value, row_number() OVER (PARTITION BY answer_key ORDER BY max(created_at) DESC, raw_value) AS ex_rank
     FROM pending WHERE answer_key IN (SELECT answer_key FROM top_keys) GROUP BY answer_key, raw_value
   )
   SELECT top_keys.answer_key, top_keys.n, top_keys.last_seen, examples.raw_value, examples.ex_rank IS NOT NULL AS has_example,
     (SELECT count(DISTINCT answer_key) FROM pending)::int AS total_keys, (SELECT count(*) FROM pending)::int AS scanned
   FROM top_keys LEFT JOIN examples ON examples.answer_key = top_keys.answer_key AND examples.ex_rank <= $3
   ORDER BY top_keys.n DESC, top_keys.answer_key, examples.ex_rank`,
);
const mark = statement('answers.mark', 'UPDATE answers SET applied_at = $1, applied_outcome = $2, field_id = $3, error = $4 WHERE id = $5');

export function pgAnswerRepo(sql: Sql): AnswerRepo {
  return {
    insert: (a) =>
      insert.later(sql, [rowName('answers', a.id)], undefined, a.id, a.submissionId, a.integrationId, a.leadId, a.key, JSON.stringify(a.raw), a.outcome, a.error, a.fieldId, a.createdAt),
    listPendingUnmapped: async (integrationId, keys, limit) => (await pending.rows(sql, integrationId, [...keys], limit)).map(rowToAnswer),
    countPendingUnmapped: async (integrationId, keys) => {
      const row = (await counts.one(sql, integrationId, [...keys]))!;
      return { withKeys: row.with_keys, others: row.others };
    },
    summarizePendingUnmapped: async (integrationId, limits) => foldUnmappedKeys(await summary.rows(sql, integrationId, limits.keys, limits.examples, limits.scan)),
    markApplied: (id, at, outcome, fieldId, error) => mark.later(sql, [rowName('answers', id)], undefined, at, outcome, fieldId, error, id),
  };
}
