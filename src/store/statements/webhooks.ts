// Webhook endpoints, the outbox and its deliveries: the statements both engines read alike (flags are
// 0 or 1 on both, counts cast to integer). The lists of several deliveries' attempts (an array
// parameter) and the claim (PostgreSQL's SKIP LOCKED) stay each engine's own.
import { statements } from './shared.js';

const ENDPOINT_COLUMNS = `id, url, event_types, workspace_id, description, secret, previous_secret,
  previous_secret_until, paused, disabled_at, disabled_reason, dropped_deliveries, created_by, created_at, updated_at`;

/** The oldest events before $1, at most $2: what one retention run deletes with their deliveries. */
const EXPIRED_EVENTS = 'SELECT id FROM webhook_events WHERE created_at < $1 ORDER BY created_at, id LIMIT $2';

/**
 * The claim's choice (its parameters: $1 the replica, $3 now, $4 the limit, $5 the cap per endpoint),
 * as common table expressions both engines' claims start with: the due deliveries of endpoints neither
 * paused nor disabled, numbered per endpoint by when they came due, and of each endpoint only as many
 * as the cap leaves beside the claims this replica still holds on it, so that an endpoint that hangs
 * holds at most the cap of one replica's attempts. Every due delivery is numbered: the pending ones
 * are bounded by the endpoints' caps (PENDING_DELIVERIES_PER_ENDPOINT_MAX, WEBHOOK_ENDPOINTS_MAX).
 */
export const CLAIM_CHOICE = `held AS (
     SELECT endpoint_id, count(*) AS n FROM webhook_deliveries
     WHERE status = 'pending' AND next_attempt_at > $3 AND claimed_by = $1 AND claimed_until > $3
     GROUP BY endpoint_id),
   ranked AS (
     SELECT d.id, d.endpoint_id, d.next_attempt_at,
       row_number() OVER (PARTITION BY d.endpoint_id ORDER BY d.next_attempt_at, d.id) AS n
     FROM webhook_deliveries d
     WHERE d.status = 'pending' AND d.next_attempt_at <= $3
       AND d.endpoint_id IN (SELECT id FROM webhook_endpoints WHERE paused = 0 AND disabled_at IS NULL)),
   pick AS (
     SELECT r.id FROM ranked r LEFT JOIN held h ON h.endpoint_id = r.endpoint_id
     WHERE r.n + coalesce(h.n, 0) <= $5
     ORDER BY r.next_attempt_at, r.id LIMIT $4)`;

export const webhookStatements = statements('webhooks', {
  insertEndpoint: `INSERT INTO webhook_endpoints (${ENDPOINT_COLUMNS})
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
  getEndpoint: 'SELECT * FROM webhook_endpoints WHERE id = $1',
  // '' sorts before every id: the first page.
  listEndpoints: 'SELECT * FROM webhook_endpoints WHERE id > $1 ORDER BY id LIMIT $2',
  countEndpoints: `SELECT CAST(count(*) AS integer) AS total,
   CAST(coalesce(sum(CASE WHEN workspace_id IS NOT DISTINCT FROM $1 THEN 1 ELSE 0 END), 0) AS integer) AS workspace
   FROM webhook_endpoints`,
  updateEndpoint: `UPDATE webhook_endpoints SET event_types = $2, description = $3, secret = $4, previous_secret = $5,
   previous_secret_until = $6, paused = $7, disabled_at = $8, disabled_reason = $9, updated_at = $10 WHERE id = $1`,
  deleteEndpointAttempts: `DELETE FROM webhook_attempts WHERE delivery_id IN (
   SELECT id FROM webhook_deliveries WHERE endpoint_id = $1)`,
  deleteEndpointDeliveries: 'DELETE FROM webhook_deliveries WHERE endpoint_id = $1',
  deleteEndpoint: 'DELETE FROM webhook_endpoints WHERE id = $1',
  // $1 null: only the endpoints for every workspace (a comparison with null is never true).
  subscribers: `SELECT * FROM webhook_endpoints WHERE disabled_at IS NULL AND (workspace_id IS NULL OR workspace_id = $1)
   ORDER BY id`,
  insertEvent: 'INSERT INTO webhook_events (id, type, workspace_id, payload, created_at) VALUES ($1, $2, $3, $4, $5)',
  getEvent: 'SELECT * FROM webhook_events WHERE id = $1',
  insertDelivery: `INSERT INTO webhook_deliveries (id, event_id, endpoint_id, status, attempts, next_attempt_at,
   created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
  // Ids are time-ordered: every pending delivery of the endpoint but its newest $2.
  dropBeyondCap: `UPDATE webhook_deliveries SET status = 'dropped', updated_at = $3
   WHERE endpoint_id = $1 AND status = 'pending' AND id NOT IN (
     SELECT id FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'pending' ORDER BY id DESC LIMIT $2)`,
  countDropped: 'UPDATE webhook_endpoints SET dropped_deliveries = dropped_deliveries + $2 WHERE id = $1',
  findDelivery: 'SELECT * FROM webhook_deliveries WHERE event_id = $1 AND endpoint_id = $2',
  requeue: `UPDATE webhook_deliveries SET status = 'pending', attempts = 0, next_attempt_at = $2, claimed_by = NULL,
   claimed_until = NULL, updated_at = $2 WHERE id = $1`,
  // '~' sorts after every id: the first page.
  listDeliveries: `SELECT * FROM webhook_deliveries WHERE endpoint_id = $1 AND id < $2 ORDER BY id DESC LIMIT $3`,
  // The deliveries one claim took (SQLite: read after its update; PostgreSQL's claim answers them itself).
  claimed: `SELECT d.*, e.type, e.workspace_id, e.payload, e.created_at AS event_created_at, p.url, p.secret,
     p.previous_secret, p.previous_secret_until
   FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id JOIN webhook_endpoints p ON p.id = d.endpoint_id
   WHERE d.claimed_by = $1 AND d.claimed_until = $2 AND d.status = 'pending' ORDER BY d.created_at, d.id`,
  // By webhook_deliveries_endpoint: the endpoint's delivered rows, rarely read (an event given up).
  deliveredSince: `SELECT 1 AS found FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'delivered'
   AND updated_at >= $2 LIMIT 1`,
  // By webhook_deliveries_due (its status prefix): the backlog the metrics show at every scrape.
  backlog: `SELECT CAST(count(*) AS integer) AS pending, min(created_at) AS oldest FROM webhook_deliveries
   WHERE status = 'pending'`,
  insertAttempt: `INSERT INTO webhook_attempts (id, delivery_id, at, status_code, duration_ms, response_head, error)
   VALUES ($1, $2, $3, $4, $5, $6, $7)`,
  // Only by the replica holding the claim: a claim that outlived its lease may have been taken over.
  settle: `UPDATE webhook_deliveries SET status = $3, attempts = attempts + 1,
   next_attempt_at = coalesce($4, next_attempt_at), last_status = $5, last_error = $6, claimed_by = NULL,
   claimed_until = NULL, updated_at = $7 WHERE id = $1 AND claimed_by = $2`,
  expireEventAttempts: `DELETE FROM webhook_attempts WHERE delivery_id IN (
   SELECT id FROM webhook_deliveries WHERE event_id IN (${EXPIRED_EVENTS}))`,
  expireEventDeliveries: `DELETE FROM webhook_deliveries WHERE event_id IN (${EXPIRED_EVENTS})`,
  expireEvents: `DELETE FROM webhook_events WHERE id IN (${EXPIRED_EVENTS})`,
  // Walks the index webhook_attempts_age from the oldest attempt.
  expireAttempts: `DELETE FROM webhook_attempts WHERE id IN (
   SELECT id FROM webhook_attempts WHERE at < $1 ORDER BY at LIMIT $2)`,
});
