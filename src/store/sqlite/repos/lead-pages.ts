// Pages of one integration's leads in SQLite: the shared statements (src/store/statements/lead-pages.ts)
// and the count, one row per integration here.
import type { Db } from '../connection.js';
import { prepareShared } from '../shared.js';
import type { LeadPageRepo } from '../../repos/lead-pages.js';
import { leadPageStatements as shared } from '../../statements/lead-pages.js';
import { rowToLead, type LeadRow } from './leads.js';

export function sqliteLeadPageRepo(db: Db): LeadPageRepo {
  const count = db.prepare<[string], { n: number }>('SELECT n FROM integration_lead_counts WHERE integration_id = ?');
  const after = prepareShared<LeadRow>(db, shared.after);
  const before = prepareShared<LeadRow>(db, shared.before);
  const offset = prepareShared<LeadRow>(db, shared.offset);
  return {
    countOfIntegration: async (integrationId) => count.get(integrationId)?.n ?? 0,
    pageOfIntegration: async (integrationId, position, limit) => {
      if ('after' in position)
        return after.all(integrationId, position.after.createdAt, position.after.id, limit).map(rowToLead);
      if ('before' in position)
        return before.all(integrationId, position.before.createdAt, position.before.id, limit).map(rowToLead).reverse();
      return offset.all(integrationId, limit, position.offset).map(rowToLead);
    },
  };
}
