// Migration states, the audit log and usage counters in SQLite: the shared statements
// (src/store/statements/states.ts) and SQLite's own.
import type { Db } from '../connection.js';
import { prepareShared } from '../shared.js';
import {
  USAGE_ROLLUP_HOUR,
  type HourlyUsage,
  type Interface,
  type LegacySample,
  type MigrationState,
  type StateRepo,
} from '../../repos/states.js';
import { stateStatements as shared } from '../../statements/states.js';
import { sqlitePortingRepo } from './porting.js';
import { rowToAudit as decodedRowToAudit, type AuditRow as DecodedAuditRow } from '../../sql-rows.js';

/** The row as SQLite holds it: the details as JSON text. */
type AuditRow = Omit<DecodedAuditRow, 'details'> & { details: string | null };

const rowToAudit = (r: AuditRow) =>
  decodedRowToAudit({ ...r, details: r.details === null ? null : (JSON.parse(r.details) as Record<string, unknown>) });

export function sqliteStateRepo(db: Db): StateRepo {
  const get = prepareShared<{ state: MigrationState }>(db, shared.get);
  const set = prepareShared(db, shared.set);
  const addAudit = prepareShared(db, shared.addAudit);
  const auditFor = db.prepare<[string, number], AuditRow>(
    'SELECT * FROM audit_log WHERE integration_id = ? ORDER BY at DESC, rowid DESC LIMIT ?',
  );
  const auditAll = db.prepare<[number], AuditRow>('SELECT * FROM audit_log ORDER BY at DESC, rowid DESC LIMIT ?');
  const addUsage = db.prepare(
    `INSERT INTO api_usage (integration_id, interface, route, hour, calls, last_seen, ok_calls, last_ok)
     VALUES (@integrationId, @interface, @route, @hour, @calls, @lastSeen, @okCalls, @lastOk)
     ON CONFLICT (integration_id, interface, route, hour) DO UPDATE SET
       calls = calls + excluded.calls, last_seen = max(last_seen, excluded.last_seen),
       ok_calls = ok_calls + excluded.ok_calls, last_ok = coalesce(max(last_ok, excluded.last_ok), last_ok, excluded.last_ok)`,
  );
  const usage = prepareShared<{
    route: string;
    interface: Interface;
    calls: number;
    last_seen: string;
    ok_calls: number;
    last_ok: string | null;
  }>(db, shared.usage);
  const perHour = prepareShared<HourlyUsage>(db, shared.perHour);
  const lastSeen = prepareShared<{ last: string | null }>(db, shared.lastSeen);
  const rollUpCut = prepareShared<{ hour: string }>(db, shared.rollUpCut);
  const rolled = 'hour > @rollup AND hour < @before AND hour <= @cut';
  const rollUp = db.prepare(
    `INSERT INTO api_usage (integration_id, interface, route, hour, calls, last_seen, ok_calls, last_ok)
     SELECT integration_id, interface, route, @rollup, sum(calls), max(last_seen), sum(ok_calls), max(last_ok) FROM api_usage
     WHERE ${rolled} GROUP BY integration_id, interface, route
     ON CONFLICT (integration_id, interface, route, hour) DO UPDATE SET
       calls = calls + excluded.calls, last_seen = max(last_seen, excluded.last_seen),
       ok_calls = ok_calls + excluded.ok_calls, last_ok = coalesce(max(last_ok, excluded.last_ok), last_ok, excluded.last_ok)`,
  );
  const deleteRolled = db.prepare(`DELETE FROM api_usage WHERE ${rolled}`);
  const bumpIgnored = prepareShared(db, shared.bumpIgnored);
  const addIgnored = db.prepare(
    `INSERT INTO ignored_fields (integration_id, field, calls, last_seen)
     SELECT @integrationId, @field, 1, @at WHERE (SELECT count(*) FROM ignored_fields WHERE integration_id = @integrationId) < @maxNames`,
  );
  const ignored = prepareShared<{ field: string; calls: number; last_seen: string }>(db, shared.ignored);
  const deleteIgnored = prepareShared(db, shared.deleteIgnored);
  const putSample = db.prepare(
    `INSERT INTO legacy_samples (integration_id, route, at, sample) VALUES (?, ?, ?, ?)
     ON CONFLICT (integration_id, route) DO UPDATE SET at = excluded.at, sample = excluded.sample WHERE excluded.at >= legacy_samples.at`,
  );
  const samples = prepareShared<{ route: string; at: string; sample: string }>(db, shared.samples);
  const deleteSamples = prepareShared(db, shared.deleteSamples);
  return {
    ...sqlitePortingRepo(db),
    get: async (integrationId) => get.get(integrationId)?.state ?? 'legacy',
    set: async (integrationId, state, at) => void set.run(integrationId, state, at),
    addAudit: async (e) =>
      void addAudit.run(
        e.id,
        e.integrationId,
        e.action,
        e.fromState,
        e.toState,
        e.actor,
        e.reason,
        e.details === null ? null : JSON.stringify(e.details),
        e.at,
      ),
    listAudit: async (integrationId, limit) =>
      (integrationId === null ? auditAll.all(limit) : auditFor.all(integrationId, limit)).map(rowToAudit),
    addUsage: async (increments) => {
      for (const inc of increments) addUsage.run(inc);
    },
    usageSince: async (integrationId, sinceHour) =>
      usage.all(sinceHour, integrationId).map((r) => ({
        route: r.route,
        interface: r.interface,
        calls: r.calls,
        lastSeen: r.last_seen,
        okCalls: r.ok_calls,
        lastOk: r.last_ok,
      })),
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
        if (bumpIgnored.run(at, integrationId, field).changes === 0)
          addIgnored.run({ integrationId, field, at, maxNames });
      }
    },
    ignoredFields: async (integrationId) =>
      ignored.all(integrationId).map((r) => ({ field: r.field, calls: r.calls, lastSeen: r.last_seen })),
    deleteIgnoredBefore: async (before, limit) => deleteIgnored.run(before, limit).changes,
    putSamples: async (list: readonly LegacySample[]) => {
      for (const s of list) putSample.run(s.integrationId, s.route, s.at, JSON.stringify(s.sample));
    },
    samples: async (integrationId) =>
      samples.all(integrationId).map((r) => ({
        integrationId,
        route: r.route,
        at: r.at,
        sample: JSON.parse(r.sample) as Record<string, unknown>,
      })),
    deleteSamplesBefore: async (before, limit) => deleteSamples.run(before, limit).changes,
  };
}
