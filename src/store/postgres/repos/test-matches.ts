// Live persons found by test calls, in PostgreSQL (migration 19).
import type { TestMatchRepo } from '../../repos/test-matches.js';
import { rowToTestMatch, type TestMatchRow as Row } from '../../sql-rows.js';
import { statement, type Sql } from '../sql.js';

const bump = statement(
  'testMatches.bump',
  `UPDATE test_matches SET lead_id = $4, endpoint = $5, event_id = $6, matched_by = $7, own = $8, calls = calls + 1, last_at = greatest(last_at, $9)
   WHERE integration_id = $1 AND key_id = $2 AND contact_id = $3`,
);
const add = statement(
  'testMatches.add',
  `INSERT INTO test_matches (integration_id, key_id, contact_id, lead_id, endpoint, event_id, matched_by, own, calls, first_at, last_at)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 1, $9, $9)`,
);
const count = statement<{ n: number }>('testMatches.count', 'SELECT count(*)::int AS n FROM test_matches WHERE integration_id = $1');
const countOfKey = statement<{ n: number }>('testMatches.countOfKey', 'SELECT count(*)::int AS n FROM test_matches WHERE integration_id = $1 AND key_id = $2');
// The key's prefix joined by its primary key, for the page's rows alone.
const columns = 't.*, (SELECT k.prefix FROM api_keys k WHERE k.id = t.key_id) AS key_prefix';
const first = statement<Row>(
  'testMatches.first',
  `SELECT ${columns} FROM test_matches t WHERE t.integration_id = $1 ORDER BY t.first_at DESC, t.key_id DESC, t.contact_id DESC LIMIT $2`,
);
const next = statement<Row>(
  'testMatches.next',
  `SELECT ${columns} FROM test_matches t WHERE t.integration_id = $1 AND (t.first_at, t.key_id, t.contact_id) < ($2, $3, $4)
   ORDER BY t.first_at DESC, t.key_id DESC, t.contact_id DESC LIMIT $5`,
);
// Walks the index test_matches_age from the oldest row.
const expire = statement(
  'testMatches.expire',
  `DELETE FROM test_matches WHERE (integration_id, key_id, contact_id) IN (
     SELECT integration_id, key_id, contact_id FROM test_matches WHERE last_at < $1 ORDER BY last_at LIMIT $2)`,
);

export function pgTestMatchRepo(sql: Sql): TestMatchRepo {
  return {
    record: async (m, maxRows) => {
      const values = [m.leadId, m.endpoint, m.eventId, m.matchedBy, m.own, m.at] as const;
      if ((await bump.run(sql, m.integrationId, m.keyId, m.contactId, ...values)).rowCount === 1) return true;
      if ((await countOfKey.one(sql, m.integrationId, m.keyId))!.n >= maxRows) return false;
      await add.run(sql, m.integrationId, m.keyId, m.contactId, ...values);
      return true;
    },
    page: async (integrationId, limit, after) =>
      (after === null ? await first.rows(sql, integrationId, limit) : await next.rows(sql, integrationId, after.firstAt, after.keyId, after.contactId, limit)).map(rowToTestMatch),
    count: async (integrationId) => (await count.one(sql, integrationId))!.n,
    deleteBefore: async (before, limit) => (await expire.run(sql, before, limit)).rowCount ?? 0,
  };
}
