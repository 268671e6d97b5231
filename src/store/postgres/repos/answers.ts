// The answer log in PostgreSQL: the shared statements (src/store/statements/answers.ts), the reads of a
// list of keys (an array parameter), the counts (cast to int), the kept counts written as arrays in key
// order, and the expiry.
import { expiredPerKey, type AnswerRepo, type KeptIncrement } from '../../repos/answers.js';
import { foldUnmappedKeys, rowToAnswer, type AnswerRow, type UnmappedKeyRow } from '../../sql-rows.js';
import { answerStatements as shared } from '../../statements/answers.js';
import { rowName, sharedStatement, statement, type Sql } from '../sql.js';

const insert = sharedStatement(shared.insert);
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
// One statement: the integration's totals, joined to the counts of the keys asked about.
const kept = statement<{ keys: number; bytes: string; answer_key: string | null; answers: string | null }>(
  'answers.kept',
  `SELECT t.keys, t.bytes, k.answer_key, k.answers
   FROM (SELECT count(*)::int AS keys, coalesce(sum(bytes), 0) AS bytes FROM answers_kept WHERE integration_id = $1) AS t
   LEFT JOIN answers_kept AS k ON k.integration_id = $1 AND k.answer_key = ANY ($2::text[])`,
);
// Every key of a unit in one statement, in key order: two units counting the same keys lock them in one order.
const addKept = statement(
  'answers.addKept',
  `INSERT INTO answers_kept AS k (integration_id, answer_key, answers, bytes)
   SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[]) ORDER BY 1, 2
   ON CONFLICT (integration_id, answer_key) DO UPDATE SET answers = k.answers + excluded.answers, bytes = greatest(0, k.bytes + excluded.bytes)`,
);
const dropEmpty = statement(
  'answers.dropEmptyKept',
  'DELETE FROM answers_kept WHERE (integration_id, answer_key) IN (SELECT * FROM unnest($1::text[], $2::text[])) AND answers <= 0',
);
const addNotKept = statement(
  'answers.addNotKept',
  `INSERT INTO answers_not_kept AS n (integration_id, answers, last_at) VALUES ($1, $2, $3)
   ON CONFLICT (integration_id) DO UPDATE SET answers = n.answers + excluded.answers, last_at = greatest(n.last_at, excluded.last_at)`,
);
const notKept = sharedStatement<{ answers: string }>(shared.notKept);
// Walks the partial index answers_kept_age, oldest first.
const deleteExpired = statement<{ integration_id: string; answer_key: string; raw_value: unknown }>(
  'answers.deleteExpired',
  `DELETE FROM answers WHERE id IN (
     SELECT id FROM answers WHERE outcome IN ('unmapped', 'invalid') AND created_at < $1 ORDER BY created_at, id LIMIT $2
   ) RETURNING integration_id, answer_key, raw_value`,
);

const sortedIncrements = (increments: readonly KeptIncrement[]) =>
  [...increments].sort((a, b) =>
    a.integrationId === b.integrationId
      ? a.key < b.key
        ? -1
        : a.key > b.key
          ? 1
          : 0
      : a.integrationId < b.integrationId
        ? -1
        : 1,
  );

const mark = sharedStatement(shared.mark);

export function pgAnswerRepo(sql: Sql): AnswerRepo {
  return {
    insert: (a) =>
      insert.later(
        sql,
        [rowName('answers', a.id)],
        a.id,
        a.submissionId,
        a.integrationId,
        a.leadId,
        a.key,
        JSON.stringify(a.raw),
        a.outcome,
        a.error,
        a.fieldId,
        a.createdAt,
      ),
    listPendingUnmapped: async (integrationId, keys, limit) =>
      (await pending.rows(sql, integrationId, [...keys], limit)).map(rowToAnswer),
    countPendingUnmapped: async (integrationId, keys) => {
      const row = (await counts.one(sql, integrationId, [...keys]))!;
      return { withKeys: row.with_keys, others: row.others };
    },
    summarizePendingUnmapped: async (integrationId, limits) =>
      foldUnmappedKeys(await summary.rows(sql, integrationId, limits.keys, limits.examples, limits.scan)),
    kept: async (integrationId, keys) => {
      const rows = await kept.rowsAlong(sql, integrationId, [...keys]);
      const perKey = new Map<string, number>();
      for (const r of rows) if (r.answer_key !== null) perKey.set(r.answer_key, Number(r.answers));
      return { keys: rows[0]!.keys, bytes: Number(rows[0]!.bytes), perKey };
    },
    addKept: async (increments) => {
      if (increments.length === 0) return;
      const list = sortedIncrements(increments);
      // Held back with the unit's answers: the counts cost no round trip of their own.
      await addKept.later(
        sql,
        list.map((i) => rowName('answers_kept', i.integrationId, i.key)),
        list.map((i) => i.integrationId),
        list.map((i) => i.key),
        list.map((i) => i.answers),
        list.map((i) => i.bytes),
      );
      const fewer = list.filter((i) => i.answers < 0);
      if (fewer.length > 0)
        await dropEmpty.run(
          sql,
          fewer.map((i) => i.integrationId),
          fewer.map((i) => i.key),
        );
    },
    addNotKept: (integrationId, answers, at) =>
      addNotKept.later(sql, [rowName('answers_not_kept', integrationId)], integrationId, answers, at),
    notKept: async (integrationId) => Number((await notKept.one(sql, integrationId))?.answers ?? 0),
    deleteExpired: async (before, limit) =>
      expiredPerKey(
        (await deleteExpired.rows(sql, before, limit)).map((r) => ({
          integrationId: r.integration_id,
          key: r.answer_key,
          raw: r.raw_value,
        })),
      ),
    markApplied: (id, at, outcome, fieldId, error) =>
      mark.later(sql, [rowName('answers', id)], at, outcome, fieldId, error, id),
  };
}
