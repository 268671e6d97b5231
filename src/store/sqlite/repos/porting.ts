// The ported flag and the answers 404s counted per person, in SQLite (migration 18): the shared
// statements (src/store/statements/porting.ts), the counting upserts and the expiry.
import type { Db } from '../connection.js';
import { prepareShared } from '../shared.js';
import type { NotFoundEntry, PortedFlag, PortingRepo } from '../../repos/states.js';
import { portingStatements as shared } from '../../statements/porting.js';

interface PortedRow {
  integration_id: string;
  ported_at: string;
  ported_by: string;
  ported_note: string | null;
}
interface NotFoundRow {
  external_contact_id: string;
  calls: number;
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
  calls: r.calls,
  firstAt: r.first_at,
  lastAt: r.last_at,
});

export function sqlitePortingRepo(db: Db): PortingRepo {
  const ported = prepareShared<PortedRow>(db, shared.ported);
  const allPorted = prepareShared<PortedRow>(db, shared.allPorted);
  const setPorted = prepareShared(db, shared.setPorted);
  const clearPorted = prepareShared(db, shared.clearPorted);
  const bump = db.prepare(
    `UPDATE answers_not_found SET calls = calls + @calls, first_at = min(first_at, @firstAt), last_at = max(last_at, @lastAt)
     WHERE integration_id = @integrationId AND external_contact_id = @externalContactId`,
  );
  const add = db.prepare(
    `INSERT INTO answers_not_found (integration_id, external_contact_id, calls, first_at, last_at)
     SELECT @integrationId, @externalContactId, @calls, @firstAt, @lastAt
     WHERE (SELECT count(*) FROM answers_not_found WHERE integration_id = @integrationId) < @maxIds`,
  );
  const first = prepareShared<NotFoundRow>(db, shared.notFound);
  const next = prepareShared<NotFoundRow>(db, shared.notFoundAfter);
  const totals = prepareShared<{ ids: number; calls: number | null }>(db, shared.notFoundTotals);
  // Walks the index answers_not_found_age from the oldest entry.
  const expire = db.prepare(
    `DELETE FROM answers_not_found WHERE rowid IN (SELECT rowid FROM answers_not_found WHERE last_at < ? ORDER BY last_at LIMIT ?)`,
  );
  const bumpBrownout = prepareShared(db, shared.bumpBrownout);
  const addBrownout = prepareShared(db, shared.addBrownout);
  const brownouts = prepareShared<{ window_start: string; route: string; calls: number; last_at: string }>(
    db,
    shared.brownouts,
  );
  const expireBrownouts = prepareShared(db, shared.expireBrownouts);
  return {
    ported: async (integrationId) => {
      const row = ported.get(integrationId);
      return row ? rowToFlag(row) : null;
    },
    allPorted: async () => allPorted.all().map(rowToFlag),
    setPorted: async (f) => setPorted.run(f.integrationId, f.at, f.by, f.note).changes === 1,
    clearPorted: async (integrationId) => clearPorted.run(integrationId).changes === 1,
    countNotFound: async (increments, maxIds) =>
      increments.filter((inc) => bump.run(inc).changes === 0 && add.run({ ...inc, maxIds }).changes === 1),
    notFound: async (integrationId, limit, after) =>
      (after === null
        ? first.all(integrationId, limit)
        : next.all(integrationId, after.lastAt, after.externalContactId, limit)
      ).map(rowToEntry),
    notFoundTotals: async (integrationId) => {
      const row = totals.get(integrationId)!;
      return { ids: row.ids, calls: row.calls ?? 0 };
    },
    deleteNotFound: async (before, limit) => expire.run(before, limit).changes,
    countBrownoutRefusals: async (refusals, maxRows) => {
      for (const r of refusals) {
        const key = [r.integrationId, r.windowStart, r.route, r.calls, r.lastAt] as const;
        if (bumpBrownout.run(...key).changes === 0) addBrownout.run(...key, maxRows);
      }
    },
    brownoutRefusals: async (integrationId, limit) =>
      brownouts.all(integrationId, limit).map((r) => ({
        windowStart: r.window_start,
        route: r.route,
        calls: r.calls,
        lastAt: r.last_at,
      })),
    deleteBrownoutRefusals: async (before, limit) => expireBrownouts.run(before, limit).changes,
  };
}
