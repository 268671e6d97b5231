// The ported flag and the answers 404s counted per person: the statements both engines run as written
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
});
