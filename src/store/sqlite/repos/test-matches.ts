// Live persons found by test calls, in SQLite (migration 21).
import type { Db } from '../connection.js';
import type { TestMatchRepo } from '../../repos/test-matches.js';
import { rowToTestMatch, type TestMatchRow as Row } from '../../sql-rows.js';

export function sqliteTestMatchRepo(db: Db): TestMatchRepo {
  const bump = db.prepare(
    `UPDATE test_matches SET lead_id = @leadId, endpoint = @endpoint, event_id = @eventId, matched_by = @matchedBy, own = @own,
       calls = calls + 1, last_at = max(last_at, @at)
     WHERE integration_id = @integrationId AND key_id = @keyId AND contact_id = @contactId`,
  );
  const add = db.prepare(
    `INSERT INTO test_matches (integration_id, key_id, contact_id, lead_id, endpoint, event_id, matched_by, own, calls, first_at, last_at)
     VALUES (@integrationId, @keyId, @contactId, @leadId, @endpoint, @eventId, @matchedBy, @own, 1, @at, @at)`,
  );
  const count = db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM test_matches WHERE integration_id = ?');
  const countOfKey = db.prepare<[string, string], { n: number }>('SELECT count(*) AS n FROM test_matches WHERE integration_id = ? AND key_id = ?');
  // The key's prefix joined by its primary key, for the page's rows alone.
  const columns = 't.*, (SELECT k.prefix FROM api_keys k WHERE k.id = t.key_id) AS key_prefix';
  const first = db.prepare<[string, number], Row>(
    `SELECT ${columns} FROM test_matches t WHERE t.integration_id = ? ORDER BY t.first_at DESC, t.key_id DESC, t.contact_id DESC LIMIT ?`,
  );
  const next = db.prepare<[string, string, string, string, number], Row>(
    `SELECT ${columns} FROM test_matches t WHERE t.integration_id = ? AND (t.first_at, t.key_id, t.contact_id) < (?, ?, ?)
     ORDER BY t.first_at DESC, t.key_id DESC, t.contact_id DESC LIMIT ?`,
  );
  // Walks the index test_matches_age from the oldest row.
  const expire = db.prepare(
    `DELETE FROM test_matches WHERE (integration_id, key_id, contact_id) IN (
       SELECT integration_id, key_id, contact_id FROM test_matches WHERE last_at < ? ORDER BY last_at LIMIT ?)`,
  );
  return {
    record: async (m, maxRows) => {
      const row = { ...m, own: m.own ? 1 : 0 };
      if (bump.run(row).changes > 0) return true;
      if (countOfKey.get(m.integrationId, m.keyId)!.n >= maxRows) return false;
      add.run(row);
      return true;
    },
    page: async (integrationId, limit, after) =>
      (after === null ? first.all(integrationId, limit) : next.all(integrationId, after.firstAt, after.keyId, after.contactId, limit)).map(rowToTestMatch),
    count: async (integrationId) => count.get(integrationId)!.n,
    deleteBefore: async (before, limit) => expire.run(before, limit).changes,
  };
}
