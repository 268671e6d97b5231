// Brownout windows set through the admin API: every statement the same on both engines.
import { statements } from './shared.js';

export const brownoutStatements = statements('brownouts', {
  // By the index brownout_windows_integration.
  list: 'SELECT * FROM brownout_windows WHERE integration_id = $1 ORDER BY start_at, id',
  insert: `INSERT INTO brownout_windows (id, integration_id, start_at, minutes, end_at, created_by, created_at)
   VALUES ($1, $2, $3, $4, $5, $6, $7)`,
  remove: 'DELETE FROM brownout_windows WHERE integration_id = $1 AND id = $2',
  // The calendar's look each second, by the indexes brownout_windows_start and brownout_windows_end.
  between: `SELECT * FROM brownout_windows WHERE (start_at > $1 AND start_at <= $2) OR (end_at > $1 AND end_at <= $2)
   ORDER BY start_at, id`,
  // Walks the index brownout_windows_end from the window that ended first.
  expire: `DELETE FROM brownout_windows WHERE id IN (
   SELECT id FROM brownout_windows WHERE end_at < $1 ORDER BY end_at LIMIT $2)`,
});
