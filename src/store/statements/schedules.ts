// Scheduled switch-offs and the calendar's moments told: every statement the same on both engines (`force` is 0 or 1 on both).
import { statements } from './shared.js';

export const scheduleStatements = statements('schedules', {
  get: 'SELECT * FROM switch_off_schedules WHERE integration_id = $1',
  put: `INSERT INTO switch_off_schedules (integration_id, at, force, retry_minutes, deadline, status, attempts,
     next_attempt_at, last_attempt_at, last_refusal, created_by, created_at, reason)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
   ON CONFLICT (integration_id) DO UPDATE SET at = excluded.at, force = excluded.force,
     retry_minutes = excluded.retry_minutes, deadline = excluded.deadline, status = excluded.status,
     attempts = excluded.attempts, next_attempt_at = excluded.next_attempt_at,
     last_attempt_at = excluded.last_attempt_at, last_refusal = excluded.last_refusal,
     created_by = excluded.created_by, created_at = excluded.created_at, reason = excluded.reason`,
  // A schedule the rules make (the sunset), written only where the integration has none.
  create: `INSERT INTO switch_off_schedules (integration_id, at, force, retry_minutes, deadline, status, attempts,
     next_attempt_at, last_attempt_at, last_refusal, created_by, created_at, reason)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) ON CONFLICT (integration_id) DO NOTHING`,
  // By the index switch_off_schedules_due: the pending ones only.
  due: `SELECT integration_id FROM switch_off_schedules WHERE status = 'pending' AND next_attempt_at <= $1
   ORDER BY next_attempt_at, integration_id LIMIT $2`,
  // A moment told once: the first to insert it tells it.
  recordMoment: `INSERT INTO calendar_moments (integration_id, kind, at, recorded_at) VALUES ($1, $2, $3, $4)
   ON CONFLICT (integration_id, kind, at) DO NOTHING`,
  // Walks the index calendar_moments_age from the oldest moment.
  expireMoments: `DELETE FROM calendar_moments WHERE (integration_id, kind, at) IN (
   SELECT integration_id, kind, at FROM calendar_moments WHERE at < $1 ORDER BY at LIMIT $2)`,
});
