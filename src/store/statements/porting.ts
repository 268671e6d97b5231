// The ported flag, the answers 404s counted per person and the calls refused in brownout windows: the
// statements both engines run as written
// (the counting upserts, which take the earlier and the later of two times, and the expiry, which
// SQLite walks by rowid, are each engine's own).
import { statements } from './shared.js';

export const portingStatements = statements('porting', {
  ported: 'SELECT * FROM integration_ported WHERE integration_id = $1',
  allPorted: 'SELECT * FROM integration_ported ORDER BY integration_id',
  setPorted: `INSERT INTO integration_ported (integration_id, ported_at, ported_by, ported_note) VALUES ($1, $2, $3, $4)
   ON CONFLICT (integration_id) DO NOTHING`,
  clearPorted: 'DELETE FROM integration_ported WHERE integration_id = $1',
  notFound:
    'SELECT * FROM answers_not_found WHERE integration_id = $1 ORDER BY last_at DESC, external_contact_id DESC LIMIT $2',
  notFoundAfter: `SELECT * FROM answers_not_found WHERE integration_id = $1 AND (last_at, external_contact_id) < ($2, $3)
   ORDER BY last_at DESC, external_contact_id DESC LIMIT $4`,
  // A count and a sum: numbers on SQLite, a bigint and a numeric handed over as text on PostgreSQL; each engine reads its own.
  notFoundTotals: 'SELECT count(*) AS ids, sum(calls) AS calls FROM answers_not_found WHERE integration_id = $1',
  // The later of two times without max() or greatest(): the same text on both engines.
  bumpBrownout: `UPDATE brownout_refusals SET calls = calls + $4, last_at = CASE WHEN $5 > last_at THEN $5 ELSE last_at END
   WHERE integration_id = $1 AND window_start = $2 AND route = $3`,
  // Another replica may add the same row between the bump and this insert: then it is counted on that row.
  addBrownout: `INSERT INTO brownout_refusals AS b (integration_id, window_start, route, calls, last_at)
   SELECT $1, $2, $3, $4, $5 WHERE (SELECT count(*) FROM brownout_refusals WHERE integration_id = $1) < $6
   ON CONFLICT (integration_id, window_start, route) DO UPDATE SET calls = b.calls + excluded.calls,
     last_at = CASE WHEN excluded.last_at > b.last_at THEN excluded.last_at ELSE b.last_at END`,
  brownouts: `SELECT window_start, route, calls, last_at FROM brownout_refusals WHERE integration_id = $1
   ORDER BY window_start, route LIMIT $2`,
  // Walks the index brownout_refusals_age from the oldest window.
  expireBrownouts: `DELETE FROM brownout_refusals WHERE (integration_id, window_start, route) IN (
   SELECT integration_id, window_start, route FROM brownout_refusals WHERE window_start < $1 ORDER BY window_start LIMIT $2)`,
});
