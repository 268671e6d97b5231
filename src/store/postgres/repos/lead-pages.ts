// Pages of one integration's leads in PostgreSQL: the shared statements (src/store/statements/lead-pages.ts)
// and the count, summed over the integration's stripes.
import type { LeadPageRepo } from '../../repos/lead-pages.js';
import { rowToLead, type LeadRow } from '../../sql-rows.js';
import { leadPageStatements as shared } from '../../statements/lead-pages.js';
import { sharedStatement, statement, type Sql } from '../sql.js';

const count = statement<{ n: string }>(
  'leadPages.count',
  'SELECT sum(n) AS n FROM integration_lead_counts WHERE integration_id = $1',
);
const after = sharedStatement<LeadRow>(shared.after);
const before = sharedStatement<LeadRow>(shared.before);
const offset = sharedStatement<LeadRow>(shared.offset);

export function pgLeadPageRepo(sql: Sql): LeadPageRepo {
  return {
    countOfIntegration: async (integrationId) => Number((await count.one(sql, integrationId))?.n ?? 0),
    pageOfIntegration: async (integrationId, position, limit) => {
      if ('after' in position)
        return (await after.rows(sql, integrationId, position.after.createdAt, position.after.id, limit)).map(
          rowToLead,
        );
      if ('before' in position)
        return (await before.rows(sql, integrationId, position.before.createdAt, position.before.id, limit))
          .map(rowToLead)
          .reverse();
      return (await offset.rows(sql, integrationId, limit, position.offset)).map(rowToLead);
    },
  };
}
