// The idempotency ledger: the statements both engines run as written. The list needing review is each
// engine's own (the flag is 0 or 1 on SQLite, a boolean on PostgreSQL), and so is PostgreSQL's replay,
// which reads the lead with the ledger row.
import { SUBMISSION_COLUMNS } from '../sql-rows.js';
import { statements } from './shared.js';

export const submissionStatements = statements('submissions', {
  find: `SELECT ${SUBMISSION_COLUMNS} FROM submissions WHERE integration_id = $1 AND endpoint = $2 AND event_id = $3`,
  // JSON text on SQLite, jsonb on PostgreSQL: each engine reads its own.
  firstBody: 'SELECT body FROM submissions WHERE id = $1',
  // A second record of an event fails as a unique violation on (integration, endpoint, event_id), which
  // each engine tells as a DuplicateEventError. `needs_review` ($10) is 0 or 1 on SQLite and a boolean
  // on PostgreSQL: each engine hands over its own.
  insert: `INSERT INTO submissions (id, integration_id, endpoint, event_id, fingerprint, body, contact_id, lead_id, outcome,
     needs_review, review_reason, created_at)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
  submittedTo:
    "SELECT 1 AS found FROM submissions WHERE lead_id = $1 AND integration_id = $2 AND endpoint = 'leads' LIMIT 1",
});
