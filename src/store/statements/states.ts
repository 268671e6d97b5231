// Migration states, the audit log and usage counters: the statements both engines run as written. Each
// engine keeps its own upserts that take the later of two times (max against greatest), the audit log's
// order of ties (SQLite's rowid), the roll-up (one statement on PostgreSQL) and the samples' upsert.
import { statements } from './shared.js';

export const stateStatements = statements('states', {
  get: 'SELECT state FROM integration_states WHERE integration_id = $1',
  set: `INSERT INTO integration_states (integration_id, state, updated_at) VALUES ($1, $2, $3)
   ON CONFLICT (integration_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at`,
  // The details as JSON text, which PostgreSQL's jsonb column parses.
  addAudit: `INSERT INTO audit_log (id, integration_id, action, from_state, to_state, actor, reason, details, at)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
  // The sums are numbers on SQLite and numeric text on PostgreSQL (so is perHour's): each engine reads its own.
  usage: `SELECT route, interface, sum(CASE WHEN hour >= $1 THEN calls ELSE 0 END) AS calls, max(last_seen) AS last_seen,
          sum(CASE WHEN hour >= $1 THEN ok_calls ELSE 0 END) AS ok_calls, max(last_ok) AS last_ok
   FROM api_usage WHERE integration_id = $2 GROUP BY interface, route ORDER BY interface, route`,
  perHour: `SELECT hour, interface, sum(calls) AS calls FROM api_usage WHERE integration_id = $1 AND hour >= $2 AND interface <> 'v1-test'
   GROUP BY hour, interface ORDER BY hour, interface`,
  lastSeen: 'SELECT max(last_seen) AS last FROM api_usage WHERE integration_id = $1 AND interface = $2',
  // Walks the index api_usage_hour from the oldest hour: the last hour a run reaches, at most `limit` rows in.
  rollUpCut: 'SELECT hour FROM api_usage WHERE hour > $1 AND hour < $2 ORDER BY hour LIMIT 1 OFFSET $3',
  bumpIgnored: 'UPDATE ignored_fields SET calls = calls + 1, last_seen = $1 WHERE integration_id = $2 AND field = $3',
  ignored: 'SELECT field, calls, last_seen FROM ignored_fields WHERE integration_id = $1 ORDER BY field',
  // No index on last_seen: the table holds at most 1,000 names per integration (IGNORED_NAMES_MAX_PER_INTEGRATION).
  deleteIgnored:
    'DELETE FROM ignored_fields WHERE (integration_id, field) IN (SELECT integration_id, field FROM ignored_fields WHERE last_seen < $1 ORDER BY last_seen LIMIT $2)',
  samples: 'SELECT route, at, sample FROM legacy_samples WHERE integration_id = $1 ORDER BY route',
  deleteSamples:
    'DELETE FROM legacy_samples WHERE (integration_id, route) IN (SELECT integration_id, route FROM legacy_samples WHERE at < $1 ORDER BY at LIMIT $2)',
});
