// The ported flag and the answers 404s counted per person, in SQLite (migration 18).
import type { Db } from '../connection.js';
import type { NotFoundEntry, PortedFlag, PortingRepo } from '../../repos/states.js';

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

const rowToFlag = (r: PortedRow): PortedFlag => ({ integrationId: r.integration_id, at: r.ported_at, by: r.ported_by, note: r.ported_note });
const rowToEntry = (r: NotFoundRow): NotFoundEntry => ({ externalContactId: r.external_contact_id, calls: r.calls, firstAt: r.first_at, lastAt: r.last_at });

export function sqlitePortingRepo(db: Db): PortingRepo {
  const ported = db.prepare<[string], PortedRow>('SELECT * FROM integration_ported WHERE integration_id = ?');
  const allPorted = db.prepare<[], PortedRow>('SELECT * FROM integration_ported ORDER BY integration_id');
  const setPorted = db.prepare(
    `INSERT INTO integration_ported (integration_id, ported_at, ported_by, ported_note) VALUES (@integrationId, @at, @by, @note)
     ON CONFLICT (integration_id) DO NOTHING`,
  );
  const clearPorted = db.prepare('DELETE FROM integration_ported WHERE integration_id = ?');
  const bump = db.prepare(
    `UPDATE answers_not_found SET calls = calls + @calls, first_at = min(first_at, @firstAt), last_at = max(last_at, @lastAt)
     WHERE integration_id = @integrationId AND external_contact_id = @externalContactId`,
  );
  const add = db.prepare(
    `INSERT INTO answers_not_found (integration_id, external_contact_id, calls, first_at, last_at)
     SELECT @integrationId, @externalContactId, @calls, @firstAt, @lastAt
     WHERE (SELECT count(*) FROM answers_not_found WHERE integration_id = @integrationId) < @maxIds`,
  );
  const first = db.prepare<[string, number], NotFoundRow>(
    'SELECT * FROM answers_not_found WHERE integration_id = ? ORDER BY last_at DESC, external_contact_id DESC LIMIT ?',
  );
  const next = db.prepare<[string, string, string, number], NotFoundRow>(
    `SELECT * FROM answers_not_found WHERE integration_id = ? AND (last_at, external_contact_id) < (?, ?)
     ORDER BY last_at DESC, external_contact_id DESC LIMIT ?`,
  );
  const totals = db.prepare<[string], { ids: number; calls: number | null }>('SELECT count(*) AS ids, sum(calls) AS calls FROM answers_not_found WHERE integration_id = ?');
  // Walks the index answers_not_found_age from the oldest entry.
  const expire = db.prepare(
    `DELETE FROM answers_not_found WHERE rowid IN (SELECT rowid FROM answers_not_found WHERE last_at < ? ORDER BY last_at LIMIT ?)`,
  );
  return {
    ported: async (integrationId) => {
      const row = ported.get(integrationId);
      return row ? rowToFlag(row) : null;
    },
    allPorted: async () => allPorted.all().map(rowToFlag),
    setPorted: async (flag) => setPorted.run(flag).changes === 1,
    clearPorted: async (integrationId) => clearPorted.run(integrationId).changes === 1,
    countNotFound: async (increments, maxIds) => {
      for (const inc of increments) if (bump.run(inc).changes === 0) add.run({ ...inc, maxIds });
    },
    notFound: async (integrationId, limit, after) =>
      (after === null ? first.all(integrationId, limit) : next.all(integrationId, after.lastAt, after.externalContactId, limit)).map(rowToEntry),
    notFoundTotals: async (integrationId) => {
      const row = totals.get(integrationId)!;
      return { ids: row.ids, calls: row.calls ?? 0 };
    },
    deleteNotFound: async (before, limit) => expire.run(before, limit).changes,
  };
}
