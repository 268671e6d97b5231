// Migration states, the audit log and usage counters in PostgreSQL: the shared statements
// (src/store/statements/states.ts) and PostgreSQL's own.
import {
  USAGE_ROLLUP_HOUR,
  type HourlyUsage,
  type Interface,
  type MigrationState,
  type StateRepo,
  type UsageIncrement,
} from '../../repos/states.js';
import { rowToAudit, type AuditRow } from '../../sql-rows.js';
import { stateStatements as shared } from '../../statements/states.js';
import { sharedStatement, statement, type Sql } from '../sql.js';
import { pgPortingRepo } from './porting.js';

const get = sharedStatement<{ state: MigrationState }>(shared.get);
const set = sharedStatement(shared.set);
const addAudit = sharedStatement(shared.addAudit);
// Ties of `at` in insertion order: ids are time-ordered (src/store/ids.ts), as SQLite's rowid is.
const auditFor = statement<AuditRow>(
  'states.auditFor',
  'SELECT * FROM audit_log WHERE integration_id = $1 ORDER BY at DESC, id DESC LIMIT $2',
);
const auditAll = statement<AuditRow>('states.auditAll', 'SELECT * FROM audit_log ORDER BY at DESC, id DESC LIMIT $1');
// greatest() skips NULLs: a row's last success stays when the increment has none.
const addUsage = statement(
  'states.addUsage',
  `INSERT INTO api_usage AS u (integration_id, interface, route, hour, calls, last_seen, ok_calls, last_ok)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
   ON CONFLICT (integration_id, interface, route, hour) DO UPDATE SET
     calls = u.calls + excluded.calls, last_seen = greatest(u.last_seen, excluded.last_seen),
     ok_calls = u.ok_calls + excluded.ok_calls, last_ok = greatest(u.last_ok, excluded.last_ok)`,
);
const usage = sharedStatement<{
  route: string;
  interface: Interface;
  calls: string;
  last_seen: string;
  ok_calls: string;
  last_ok: string | null;
}>(shared.usage);
const perHour = sharedStatement<{ hour: string; interface: HourlyUsage['interface']; calls: string }>(shared.perHour);
const lastSeen = sharedStatement<{ last: string | null }>(shared.lastSeen);
const rollUpCut = sharedStatement<{ hour: string }>(shared.rollUpCut);
// Summed and deleted in one statement: the rows deleted are exactly the rows summed.
const rollUp = statement(
  'states.rollUp',
  `WITH gone AS (
     DELETE FROM api_usage WHERE hour > $1 AND hour < $2 AND hour <= $3
     RETURNING integration_id, interface, route, calls, last_seen, ok_calls, last_ok
   ), summed AS (
     INSERT INTO api_usage AS u (integration_id, interface, route, hour, calls, last_seen, ok_calls, last_ok)
     SELECT integration_id, interface, route, $1, sum(calls), max(last_seen), sum(ok_calls), max(last_ok) FROM gone
     GROUP BY integration_id, interface, route ORDER BY integration_id, interface, route
     ON CONFLICT (integration_id, interface, route, hour) DO UPDATE SET
       calls = u.calls + excluded.calls, last_seen = greatest(u.last_seen, excluded.last_seen),
       ok_calls = u.ok_calls + excluded.ok_calls, last_ok = greatest(u.last_ok, excluded.last_ok)
   )
   SELECT count(*)::int AS rolled FROM gone`,
);
const bumpIgnored = sharedStatement(shared.bumpIgnored);
// Another writer may add the same name between the bump and this insert: then it is counted on that row.
const addIgnored = statement(
  'states.addIgnored',
  `INSERT INTO ignored_fields AS f (integration_id, field, calls, last_seen)
   SELECT $1, $2, 1, $3 WHERE (SELECT count(*) FROM ignored_fields WHERE integration_id = $1) < $4
   ON CONFLICT (integration_id, field) DO UPDATE SET calls = f.calls + 1, last_seen = excluded.last_seen`,
);
const ignored = sharedStatement<{ field: string; calls: string; last_seen: string }>(shared.ignored);
const deleteIgnored = sharedStatement(shared.deleteIgnored);

const putSample = statement(
  'states.putSample',
  `INSERT INTO legacy_samples AS s (integration_id, route, at, sample) VALUES ($1, $2, $3, $4)
   ON CONFLICT (integration_id, route) DO UPDATE SET at = excluded.at, sample = excluded.sample WHERE excluded.at >= s.at`,
);
const samples = sharedStatement<{ route: string; at: string; sample: string }>(shared.samples);
const deleteSamples = sharedStatement(shared.deleteSamples);

/** Increments in the order of their keys: two writers flushing the same rows lock them in one order, never in a deadlock. */
const byKey = (a: UsageIncrement, b: UsageIncrement): number => {
  const ka = [a.integrationId, a.interface, a.route, a.hour].join('\u0000');
  const kb = [b.integrationId, b.interface, b.route, b.hour].join('\u0000');
  return ka < kb ? -1 : ka > kb ? 1 : 0;
};

export function pgStateRepo(sql: Sql): StateRepo {
  return {
    ...pgPortingRepo(sql),
    get: async (integrationId) => (await get.one(sql, integrationId))?.state ?? 'legacy',
    set: async (integrationId, state, at) => void (await set.run(sql, integrationId, state, at)),
    addAudit: async (e) =>
      void (await addAudit.run(
        sql,
        e.id,
        e.integrationId,
        e.action,
        e.fromState,
        e.toState,
        e.actor,
        e.reason,
        e.details === null ? null : JSON.stringify(e.details),
        e.at,
      )),
    listAudit: async (integrationId, limit) =>
      (integrationId === null ? await auditAll.rows(sql, limit) : await auditFor.rows(sql, integrationId, limit)).map(
        rowToAudit,
      ),
    addUsage: async (increments) => {
      for (const i of [...increments].sort(byKey))
        await addUsage.run(
          sql,
          i.integrationId,
          i.interface,
          i.route,
          i.hour,
          i.calls,
          i.lastSeen,
          i.okCalls,
          i.lastOk,
        );
    },
    usageSince: async (integrationId, sinceHour) =>
      (await usage.rows(sql, sinceHour, integrationId)).map((r) => ({
        route: r.route,
        interface: r.interface,
        calls: Number(r.calls),
        lastSeen: r.last_seen,
        okCalls: Number(r.ok_calls),
        lastOk: r.last_ok,
      })),
    usagePerHour: async (integrationId, sinceHour) =>
      (await perHour.rows(sql, integrationId, sinceHour)).map((r) => ({
        hour: r.hour,
        interface: r.interface,
        calls: Number(r.calls),
      })),
    lastSeen: async (integrationId, iface) => (await lastSeen.one(sql, integrationId, iface))?.last ?? null,
    rollUpUsage: async (beforeHour, limit) => {
      const cut = (await rollUpCut.one(sql, USAGE_ROLLUP_HOUR, beforeHour, Math.max(0, limit - 1)))?.hour ?? beforeHour;
      return ((await rollUp.one(sql, USAGE_ROLLUP_HOUR, beforeHour, cut)) as { rolled: number }).rolled;
    },
    countIgnored: async (integrationId, fields, at, maxNames) => {
      for (const field of fields) {
        if ((await bumpIgnored.run(sql, at, integrationId, field)).rowCount === 0)
          await addIgnored.run(sql, integrationId, field, at, maxNames);
      }
    },
    ignoredFields: async (integrationId) =>
      (await ignored.rows(sql, integrationId)).map((r) => ({
        field: r.field,
        calls: Number(r.calls),
        lastSeen: r.last_seen,
      })),
    deleteIgnoredBefore: async (before, limit) => (await deleteIgnored.run(sql, before, limit)).rowCount ?? 0,
    putSamples: async (list) => {
      // In key order, as the counters: two replicas flushing the same rows never wait on each other in a cycle.
      const sorted = [...list].sort((a, b) =>
        a.integrationId + '\u0000' + a.route < b.integrationId + '\u0000' + b.route ? -1 : 1,
      );
      for (const s of sorted) await putSample.run(sql, s.integrationId, s.route, s.at, JSON.stringify(s.sample));
    },
    samples: async (integrationId) =>
      (await samples.rows(sql, integrationId)).map((r) => ({
        integrationId,
        route: r.route,
        at: r.at,
        sample: JSON.parse(r.sample) as Record<string, unknown>,
      })),
    deleteSamplesBefore: async (before, limit) => (await deleteSamples.run(sql, before, limit)).rowCount ?? 0,
  };
}
