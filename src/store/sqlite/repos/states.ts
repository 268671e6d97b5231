// Migration states, the audit log and usage counters in SQLite.
import type { Db } from '../connection.js';
import { USAGE_ROLLUP_HOUR, type HourlyUsage, type Interface, type LegacySample, type MigrationState, type StateRepo } from '../../repos/states.js';
import { sqlitePortingRepo } from './porting.js';
import { rowToAudit as decodedRowToAudit, type AuditRow as DecodedAuditRow } from '../../sql-rows.js';

/** The row as SQLite holds it: the details as JSON text. */
type AuditRow = Omit<DecodedAuditRow, 'details'> & { details: string | null };

const rowToAudit = (r: AuditRow) => decodedRowToAudit({ ...r, details: r.details === null ? null : (JSON.parse(r.details) as Record<string, unknown>) });

export function sqliteStateRepo(db: Db): StateRepo {
  const get = db.prepare<[string], { state: MigrationState }>('SELECT state FROM integration_states WHERE integration_id = ?');
  const set = db.prepare(
    `INSERT INTO integration_states (integration_id, state, updated_at) VALUES (?, ?, ?)
     ON CONFLICT (integration_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at`,
  );
  const addAudit = db.prepare(
    `INSERT INTO audit_log (id, integration_id, action, from_state, to_state, actor, reason, details, at)
     VALUES (@id, @integrationId, @action, @fromState, @toState, @actor, @reason, @details, @at)`,
  );
  const auditFor = db.prepare<[string, number], AuditRow>('SELECT * FROM audit_log WHERE integration_id = ? ORDER BY at DESC, rowid DESC LIMIT ?');
  const auditAll = db.prepare<[number], AuditRow>('SELECT * FROM audit_log ORDER BY at DESC, rowid DESC LIMIT ?');
  const addUsage = db.prepare(
    `INSERT INTO api_usage (integration_id, interface, route, hour, calls, last_seen, ok_calls, last_ok)
     VALUES (@integrationId, @interface, @route, @hour, @calls, @lastSeen, @okCalls, @lastOk)
     ON CONFLICT (integration_id, interface, route, hour) DO UPDATE SET
       calls = calls + excluded.calls, last_seen = max(last_seen, excluded.last_seen),
       ok_calls = ok_calls + excluded.ok_calls, last_ok = coalesce(max(last_ok, excluded.last_ok), last_ok, excluded.last_ok)`,
  );
  const usage = db.prepare<[string, string, string], { route: string; interface: Interface; calls: number; last_seen: string; ok_calls: number; last_ok: string | null }>(
    `SELECT route, interface, sum(CASE WHEN hour >= ? THEN calls ELSE 0 END) AS calls, max(last_seen) AS last_seen,
            sum(CASE WHEN hour >= ? THEN ok_calls ELSE 0 END) AS ok_calls, max(last_ok) AS last_ok
     FROM api_usage WHERE integration_id = ? GROUP BY interface, route ORDER BY interface, route`,
  );
  const perHour = db.prepare<[string, string], HourlyUsage>(
    `SELECT hour, interface, sum(calls) AS calls FROM api_usage WHERE integration_id = ? AND hour >= ? AND interface <> 'v1-test'
     GROUP BY hour, interface ORDER BY hour, interface`,
  );
  const lastSeen = db.prepare<[string, string], { last: string | null }>(
    'SELECT max(last_seen) AS last FROM api_usage WHERE integration_id = ? AND interface = ?',
  );
  // Walks the index api_usage_hour from the oldest hour: the last hour a run reaches, at most `limit` rows in.
  const rollUpCut = db.prepare<[string, string, number], { hour: string }>('SELECT hour FROM api_usage WHERE hour > ? AND hour < ? ORDER BY hour LIMIT 1 OFFSET ?');
  const rolled = "hour > @rollup AND hour < @before AND hour <= @cut";
  const rollUp = db.prepare(
    `INSERT INTO api_usage (integration_id, interface, route, hour, calls, last_seen, ok_calls, last_ok)
     SELECT integration_id, interface, route, @rollup, sum(calls), max(last_seen), sum(ok_calls), max(last_ok) FROM api_usage
     WHERE ${rolled} GROUP BY integration_id, interface, route
     ON CONFLICT (integration_id, interface, route, hour) DO UPDATE SET
       calls = calls + excluded.calls, last_seen = max(last_seen, excluded.last_seen),
       ok_calls = ok_calls + excluded.ok_calls, last_ok = coalesce(max(last_ok, excluded.last_ok), last_ok, excluded.last_ok)`,
  );
  const deleteRolled = db.prepare(`DELETE FROM api_usage WHERE ${rolled}`);
  const bumpIgnored = db.prepare('UPDATE ignored_fields SET calls = calls + 1, last_seen = ? WHERE integration_id = ? AND field = ?');
  const addIgnored = db.prepare(
    `INSERT INTO ignored_fields (integration_id, field, calls, last_seen)
     SELECT @integrationId, @field, 1, @at WHERE (SELECT count(*) FROM ignored_fields WHERE integration_id = @integrationId) < @maxNames`,
  );
  const ignored = db.prepare<[string], { field: string; calls: number; last_seen: string }>(
    'SELECT field, calls, last_seen FROM ignored_fields WHERE integration_id = ? ORDER BY field',
  );
  // No index on last_seen: the table holds at most 1,000 names per integration (IGNORED_NAMES_MAX_PER_INTEGRATION).
  const deleteIgnored = db.prepare(
    'DELETE FROM ignored_fields WHERE (integration_id, field) IN (SELECT integration_id, field FROM ignored_fields WHERE last_seen < ? ORDER BY last_seen LIMIT ?)',
  );
  const putSample = db.prepare(
    `INSERT INTO legacy_samples (integration_id, route, at, sample) VALUES (?, ?, ?, ?)
     ON CONFLICT (integration_id, route) DO UPDATE SET at = excluded.at, sample = excluded.sample WHERE excluded.at >= legacy_samples.at`,
  );
  const samples = db.prepare<[string], { route: string; at: string; sample: string }>('SELECT route, at, sample FROM legacy_samples WHERE integration_id = ? ORDER BY route');
  const deleteSamples = db.prepare(
    'DELETE FROM legacy_samples WHERE (integration_id, route) IN (SELECT integration_id, route FROM legacy_samples WHERE at < ? ORDER BY at LIMIT ?)',
  );
  return {
    ...sqlitePortingRepo(db),
    get: async (integrationId) => get.get(integrationId)?.state ?? 'legacy',
    set: async (integrationId, state, at) => void set.run(integrationId, state, at),
    addAudit: async (e) => void addAudit.run({ ...e, details: e.details === null ? null : JSON.stringify(e.details) }),
    listAudit: async (integrationId, limit) => (integrationId === null ? auditAll.all(limit) : auditFor.all(integrationId, limit)).map(rowToAudit),
    addUsage: async (increments) => {
      for (const inc of increments) addUsage.run(inc);
    },
    usageSince: async (integrationId, sinceHour) =>
      usage
        .all(sinceHour, sinceHour, integrationId)
        .map((r) => ({ route: r.route, interface: r.interface, calls: r.calls, lastSeen: r.last_seen, okCalls: r.ok_calls, lastOk: r.last_ok })),
    usagePerHour: async (integrationId, sinceHour) => perHour.all(integrationId, sinceHour),
    lastSeen: async (integrationId, iface) => lastSeen.get(integrationId, iface)?.last ?? null,
    rollUpUsage: async (beforeHour, limit) => {
      const cut = rollUpCut.get(USAGE_ROLLUP_HOUR, beforeHour, Math.max(0, limit - 1))?.hour ?? beforeHour;
      const range = { rollup: USAGE_ROLLUP_HOUR, before: beforeHour, cut };
      rollUp.run(range);
      return deleteRolled.run(range).changes;
    },
    countIgnored: async (integrationId, fields, at, maxNames) => {
      for (const field of fields) {
        if (bumpIgnored.run(at, integrationId, field).changes === 0) addIgnored.run({ integrationId, field, at, maxNames });
      }
    },
    ignoredFields: async (integrationId) => ignored.all(integrationId).map((r) => ({ field: r.field, calls: r.calls, lastSeen: r.last_seen })),
    deleteIgnoredBefore: async (before, limit) => deleteIgnored.run(before, limit).changes,
    putSamples: async (list: readonly LegacySample[]) => {
      for (const s of list) putSample.run(s.integrationId, s.route, s.at, JSON.stringify(s.sample));
    },
    samples: async (integrationId) =>
      samples.all(integrationId).map((r) => ({ integrationId, route: r.route, at: r.at, sample: JSON.parse(r.sample) as Record<string, unknown> })),
    deleteSamplesBefore: async (before, limit) => deleteSamples.run(before, limit).changes,
  };
}
