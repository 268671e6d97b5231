// Pages of one integration's leads in PostgreSQL.
import type { LeadPageRepo } from '../../repos/lead-pages.js';
import { statement, type Sql } from '../sql.js';
import { rowToLead, type LeadRow } from '../../sql-rows.js';

const live = 'integration_id = $1 AND deleted_at IS NULL';
const count = statement<{ n: string }>('leadPages.count', 'SELECT sum(n) AS n FROM integration_lead_counts WHERE integration_id = $1');
const after = statement<LeadRow>('leadPages.after', `SELECT * FROM leads WHERE ${live} AND (created_at, id) < ($2, $3) ORDER BY created_at DESC, id DESC LIMIT $4`);
const before = statement<LeadRow>('leadPages.before', `SELECT * FROM leads WHERE ${live} AND (created_at, id) > ($2, $3) ORDER BY created_at, id LIMIT $4`);
// The skipped leads are stepped over in the index only; the offset itself is bounded by the caller.
const offset = statement<LeadRow>(
  'leadPages.offset',
  `SELECT * FROM leads WHERE id IN (SELECT id FROM leads WHERE ${live} ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3)
   ORDER BY created_at DESC, id DESC`,
);

export function pgLeadPageRepo(sql: Sql): LeadPageRepo {
  return {
    countOfIntegration: async (integrationId) => Number((await count.one(sql, integrationId))?.n ?? 0),
    pageOfIntegration: async (integrationId, position, limit) => {
      if ('after' in position) return (await after.rows(sql, integrationId, position.after.createdAt, position.after.id, limit)).map(rowToLead);
      if ('before' in position) return (await before.rows(sql, integrationId, position.before.createdAt, position.before.id, limit)).map(rowToLead).reverse();
      return (await offset.rows(sql, integrationId, limit, position.offset)).map(rowToLead);
    },
  };
}
