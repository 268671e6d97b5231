// The answer log in SQLite: the shared statements (src/store/statements/answers.ts), the reads of a
// list of keys (one JSON parameter), the kept counts' upserts (max) and the expiry by rowid.
import type { Db } from '../connection.js';
import { prepareShared } from '../shared.js';
import { expiredPerKey, type AnswerRepo } from '../../repos/answers.js';
import {
  foldUnmappedKeys,
  rowToAnswer as decodedRowToAnswer,
  type AnswerRow as DecodedAnswerRow,
  type UnmappedKeyRow,
} from '../../sql-rows.js';
import { answerStatements as shared } from '../../statements/answers.js';

/** The row as SQLite holds it: the raw value as JSON text. */
type AnswerRow = Omit<DecodedAnswerRow, 'raw_value'> & { raw_value: string };

const rowToAnswer = (r: AnswerRow) => decodedRowToAnswer({ ...r, raw_value: JSON.parse(r.raw_value) });

export function sqliteAnswerRepo(db: Db): AnswerRepo {
  const insert = prepareShared(db, shared.insert);
  // The keys come as one JSON array parameter: one prepared statement whatever their number.
  const pending = db.prepare<[string, string, number], AnswerRow>(
    `SELECT * FROM answers WHERE integration_id = ? AND outcome = 'unmapped' AND applied_at IS NULL
       AND answer_key IN (SELECT value FROM json_each(?)) ORDER BY created_at, rowid LIMIT ?`,
  );
  const counts = db.prepare<{ integrationId: string; keys: string }, { with_keys: number; others: number }>(
    `SELECT count(*) FILTER (WHERE answer_key IN (SELECT value FROM json_each(@keys))) AS with_keys,
            count(*) FILTER (WHERE answer_key NOT IN (SELECT value FROM json_each(@keys))) AS others
     FROM answers WHERE integration_id = @integrationId AND outcome = 'unmapped' AND applied_at IS NULL`,
  );
  // Walks the partial index answers_unmapped for the integration, newest first: only answers still
  // waiting are read, and at most `scan` of them.
  const summary = db.prepare<
    { integrationId: string; keys: number; examples: number; scan: number },
    UnmappedKeyRow & { raw_value: string | null }
  >(
    `WITH pending AS (
     SELECT answer_key, raw_value, created_at FROM answers
     WHERE integration_id = @integrationId AND outcome = 'unmapped' AND applied_at IS NULL
     ORDER BY created_at DESC LIMIT @scan
   ),
   top_keys AS (
     SELECT answer_key, count(*) AS n, max(created_at) AS last_seen FROM pending
     GROUP BY answer_key ORDER BY n DESC, answer_key LIMIT @keys
   ),
   examples AS (
     SELECT answer_key, raw_value, row_number() OVER (PARTITION BY answer_key ORDER BY max(created_at) DESC, raw_value) AS ex_rank
     FROM pending WHERE answer_key IN (SELECT answer_key FROM top_keys) GROUP BY answer_key, raw_value
   )
   SELECT top_keys.answer_key, top_keys.n, top_keys.last_seen, examples.raw_value, examples.ex_rank IS NOT NULL AS has_example,
     (SELECT count(DISTINCT answer_key) FROM pending) AS total_keys, (SELECT count(*) FROM pending) AS scanned
   FROM top_keys LEFT JOIN examples ON examples.answer_key = top_keys.answer_key AND examples.ex_rank <= @examples
   ORDER BY top_keys.n DESC, top_keys.answer_key, examples.ex_rank`,
  );
  // One statement: the integration's totals, joined to the counts of the keys asked about.
  const kept = db.prepare<
    [string, string, string],
    { keys: number; bytes: number; answer_key: string | null; answers: number | null }
  >(
    `SELECT t.keys, t.bytes, k.answer_key, k.answers
     FROM (SELECT count(*) AS keys, coalesce(sum(bytes), 0) AS bytes FROM answers_kept WHERE integration_id = ?) AS t
     LEFT JOIN answers_kept AS k ON k.integration_id = ? AND k.answer_key IN (SELECT value FROM json_each(?))`,
  );
  const addKept = db.prepare(
    `INSERT INTO answers_kept (integration_id, answer_key, answers, bytes) VALUES (@integrationId, @key, @answers, @bytes)
     ON CONFLICT (integration_id, answer_key) DO UPDATE SET answers = answers + excluded.answers, bytes = max(0, bytes + excluded.bytes)`,
  );
  const dropEmpty = db.prepare('DELETE FROM answers_kept WHERE integration_id = ? AND answer_key = ? AND answers <= 0');
  const addNotKept = db.prepare(
    `INSERT INTO answers_not_kept (integration_id, answers, last_at) VALUES (?, ?, ?)
     ON CONFLICT (integration_id) DO UPDATE SET answers = answers + excluded.answers, last_at = max(last_at, excluded.last_at)`,
  );
  const notKept = prepareShared<{ answers: number }>(db, shared.notKept);
  // Walks the partial index answers_kept_age, oldest first.
  const deleteExpired = db.prepare<[string, number], { integration_id: string; answer_key: string; raw_value: string }>(
    `DELETE FROM answers WHERE rowid IN (
       SELECT rowid FROM answers WHERE outcome IN ('unmapped', 'invalid') AND created_at < ? ORDER BY created_at LIMIT ?
     ) RETURNING integration_id, answer_key, raw_value`,
  );
  const mark = prepareShared(db, shared.mark);
  return {
    insert: async (a) =>
      void insert.run(
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
      pending.all(integrationId, JSON.stringify(keys), limit).map(rowToAnswer),
    countPendingUnmapped: async (integrationId, keys) => {
      const row = counts.get({ integrationId, keys: JSON.stringify(keys) })!;
      return { withKeys: row.with_keys, others: row.others };
    },
    summarizePendingUnmapped: async (integrationId, limits) =>
      foldUnmappedKeys(
        summary
          .all({ integrationId, ...limits })
          .map((r) => ({ ...r, raw_value: r.raw_value === null ? null : JSON.parse(r.raw_value) })),
      ),
    kept: async (integrationId, keys) => {
      const rows = kept.all(integrationId, integrationId, JSON.stringify(keys));
      const perKey = new Map<string, number>();
      for (const r of rows) if (r.answer_key !== null) perKey.set(r.answer_key, r.answers!);
      return { keys: rows[0]!.keys, bytes: rows[0]!.bytes, perKey };
    },
    addKept: async (increments) => {
      for (const inc of increments) {
        addKept.run(inc);
        if (inc.answers < 0) dropEmpty.run(inc.integrationId, inc.key);
      }
    },
    addNotKept: async (integrationId, answers, at) => void addNotKept.run(integrationId, answers, at),
    notKept: async (integrationId) => notKept.get(integrationId)?.answers ?? 0,
    deleteExpired: async (before, limit) =>
      expiredPerKey(
        deleteExpired
          .all(before, limit)
          .map((r) => ({ integrationId: r.integration_id, key: r.answer_key, raw: JSON.parse(r.raw_value) })),
      ),
    markApplied: async (id, at, outcome, fieldId, error) => void mark.run(at, outcome, fieldId, error, id),
  };
}
