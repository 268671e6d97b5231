// The ported flag and the answers 404s counted per person, in PostgreSQL (migration 13): the shared
// statements (src/store/statements/porting.ts), the counting upserts and the expiry.
import type { BrownoutRefusal, NotFoundEntry, NotFoundIncrement, PortedFlag, PortingRepo } from '../../repos/states.js';
import { portingStatements as shared } from '../../statements/porting.js';
import { sharedStatement, statement, type Sql } from '../sql.js';

interface PortedRow {
  integration_id: string;
  ported_at: string;
  ported_by: string;
  ported_note: string | null;
}
interface NotFoundRow {
  external_contact_id: string;
  calls: string;
  first_at: string;
  last_at: string;
}

const rowToFlag = (r: PortedRow): PortedFlag => ({
  integrationId: r.integration_id,
  at: r.ported_at,
  by: r.ported_by,
  note: r.ported_note,
});
const rowToEntry = (r: NotFoundRow): NotFoundEntry => ({
  externalContactId: r.external_contact_id,
  calls: Number(r.calls),
  firstAt: r.first_at,
  lastAt: r.last_at,
});

const ported = sharedStatement<PortedRow>(shared.ported);
const allPorted = sharedStatement<PortedRow>(shared.allPorted);
const setPorted = sharedStatement(shared.setPorted);
const clearPorted = sharedStatement(shared.clearPorted);
const bump = statement(
  'porting.bumpNotFound',
  `UPDATE answers_not_found SET calls = calls + $3, first_at = least(first_at, $4), last_at = greatest(last_at, $5)
   WHERE integration_id = $1 AND external_contact_id = $2`,
);
// Another replica may add the same id between the bump and this insert: then it is counted on that row.
const add = statement(
  'porting.addNotFound',
  `INSERT INTO answers_not_found AS n (integration_id, external_contact_id, calls, first_at, last_at)
   SELECT $1, $2, $3, $4, $5 WHERE (SELECT count(*) FROM answers_not_found WHERE integration_id = $1) < $6
   ON CONFLICT (integration_id, external_contact_id) DO UPDATE SET
     calls = n.calls + excluded.calls, first_at = least(n.first_at, excluded.first_at), last_at = greatest(n.last_at, excluded.last_at)`,
);
const first = sharedStatement<NotFoundRow>(shared.notFound);
const next = sharedStatement<NotFoundRow>(shared.notFoundAfter);
const totals = sharedStatement<{ ids: string; calls: string | null }>(shared.notFoundTotals);
// Walks the index answers_not_found_age from the oldest entry.
const expire = statement(
  'porting.expireNotFound',
  `DELETE FROM answers_not_found WHERE (integration_id, external_contact_id) IN (
     SELECT integration_id, external_contact_id FROM answers_not_found WHERE last_at < $1 ORDER BY last_at LIMIT $2)`,
);

const bumpBrownout = sharedStatement(shared.bumpBrownout);
const addBrownout = sharedStatement(shared.addBrownout);
const brownouts = sharedStatement<{ window_start: string; route: string; calls: string; last_at: string }>(
  shared.brownouts,
);
const expireBrownouts = sharedStatement(shared.expireBrownouts);

/** In the order of their keys: two replicas flushing the same rows lock them in one order, never in a deadlock. */
const byKey = (a: NotFoundIncrement, b: NotFoundIncrement): number => {
  const ka = `${a.integrationId}\u0000${a.externalContactId}`;
  const kb = `${b.integrationId}\u0000${b.externalContactId}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
};

/** Brownout rows in the order of their keys, for the same reason. */
const byRow = (a: BrownoutRefusal, b: BrownoutRefusal): number => {
  const ka = `${a.integrationId}\u0000${a.windowStart}\u0000${a.route}`;
  const kb = `${b.integrationId}\u0000${b.windowStart}\u0000${b.route}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
};

export function pgPortingRepo(sql: Sql): PortingRepo {
  return {
    ported: async (integrationId) => {
      const row = await ported.one(sql, integrationId);
      return row ? rowToFlag(row) : null;
    },
    allPorted: async () => (await allPorted.rows(sql)).map(rowToFlag),
    setPorted: async (f) => (await setPorted.run(sql, f.integrationId, f.at, f.by, f.note)).rowCount === 1,
    clearPorted: async (integrationId) => (await clearPorted.run(sql, integrationId)).rowCount === 1,
    countNotFound: async (increments, maxIds) => {
      const added: NotFoundIncrement[] = [];
      for (const i of [...increments].sort(byKey)) {
        if ((await bump.run(sql, i.integrationId, i.externalContactId, i.calls, i.firstAt, i.lastAt)).rowCount !== 0)
          continue;
        const row = [i.integrationId, i.externalContactId, i.calls, i.firstAt, i.lastAt, maxIds] as const;
        if ((await add.run(sql, ...row)).rowCount === 1) added.push(i);
      }
      return added;
    },
    notFound: async (integrationId, limit, after) =>
      (after === null
        ? await first.rows(sql, integrationId, limit)
        : await next.rows(sql, integrationId, after.lastAt, after.externalContactId, limit)
      ).map(rowToEntry),
    notFoundTotals: async (integrationId) => {
      const row = (await totals.one(sql, integrationId))!;
      return { ids: Number(row.ids), calls: Number(row.calls ?? 0) };
    },
    deleteNotFound: async (before, limit) => (await expire.run(sql, before, limit)).rowCount ?? 0,
    countBrownoutRefusals: async (refusals, maxRows) => {
      for (const r of [...refusals].sort(byRow)) {
        const key = [r.integrationId, r.windowStart, r.route, r.calls, r.lastAt] as const;
        if ((await bumpBrownout.run(sql, ...key)).rowCount === 0) await addBrownout.run(sql, ...key, maxRows);
      }
    },
    brownoutRefusals: async (integrationId, limit) =>
      (await brownouts.rows(sql, integrationId, limit)).map((r) => ({
        windowStart: r.window_start,
        route: r.route,
        calls: Number(r.calls),
        lastAt: r.last_at,
      })),
    deleteBrownoutRefusals: async (before, limit) => (await expireBrownouts.run(sql, before, limit)).rowCount ?? 0,
  };
}
