// Pages of one integration's leads in SQLite.
import type { Db } from '../connection.js';
import type { LeadPageRepo } from '../../repos/lead-pages.js';
import { rowToLead, type LeadRow } from './leads.js';

export function sqliteLeadPageRepo(db: Db): LeadPageRepo {
  const live = 'integration_id = @integrationId AND deleted_at IS NULL';
  const count = db.prepare<[string], { n: number }>('SELECT n FROM integration_lead_counts WHERE integration_id = ?');
  const after = db.prepare<Record<string, unknown>, LeadRow>(
    `SELECT * FROM leads WHERE ${live} AND (created_at, id) < (@createdAt, @id) ORDER BY created_at DESC, id DESC LIMIT @limit`,
  );
  const before = db.prepare<Record<string, unknown>, LeadRow>(
    `SELECT * FROM leads WHERE ${live} AND (created_at, id) > (@createdAt, @id) ORDER BY created_at, id LIMIT @limit`,
  );
  // The skipped leads are stepped over in the index only (the inner SELECT reads no table row); the
  // offset itself is bounded by the caller.
  const offset = db.prepare<Record<string, unknown>, LeadRow>(
    `SELECT * FROM leads WHERE id IN (SELECT id FROM leads WHERE ${live} ORDER BY created_at DESC, id DESC LIMIT @limit OFFSET @offset)
     ORDER BY created_at DESC, id DESC`,
  );
  return {
    countOfIntegration: async (integrationId) => count.get(integrationId)?.n ?? 0,
    pageOfIntegration: async (integrationId, position, limit) => {
      if ('after' in position) return after.all({ integrationId, limit, ...position.after }).map(rowToLead);
      if ('before' in position) return before.all({ integrationId, limit, ...position.before }).map(rowToLead).reverse();
      return offset.all({ integrationId, limit, offset: position.offset }).map(rowToLead);
    },
  };
}
