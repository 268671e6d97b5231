// Live persons found by test calls: the statements both engines run as written (the bump, which takes
// the later of two times, and the counts are each engine's own).
import { statements } from './shared.js';

// The key's prefix joined by its primary key, for the page's rows alone.
const columns = 't.*, (SELECT k.prefix FROM api_keys k WHERE k.id = t.key_id) AS key_prefix';

export const testMatchStatements = statements('testMatches', {
  // `own` ($8) is a boolean on PostgreSQL and 0 or 1 on SQLite: each engine hands over its own.
  add: `INSERT INTO test_matches (integration_id, key_id, contact_id, lead_id, endpoint, event_id, matched_by, own, calls, first_at, last_at)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 1, $9, $9)`,
  first: `SELECT ${columns} FROM test_matches t WHERE t.integration_id = $1 ORDER BY t.first_at DESC, t.key_id DESC, t.contact_id DESC LIMIT $2`,
  next: `SELECT ${columns} FROM test_matches t WHERE t.integration_id = $1 AND (t.first_at, t.key_id, t.contact_id) < ($2, $3, $4)
   ORDER BY t.first_at DESC, t.key_id DESC, t.contact_id DESC LIMIT $5`,
  // Walks the index test_matches_age from the oldest row.
  expire: `DELETE FROM test_matches WHERE (integration_id, key_id, contact_id) IN (
     SELECT integration_id, key_id, contact_id FROM test_matches WHERE last_at < $1 ORDER BY last_at LIMIT $2)`,
});
