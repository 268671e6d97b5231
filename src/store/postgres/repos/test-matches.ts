// Live persons found by test calls, in PostgreSQL (migration 19): the shared statements
// (src/store/statements/test-matches.ts), the bump and the counts.
import type { TestMatchRepo } from '../../repos/test-matches.js';
import { rowToTestMatch, type TestMatchRow as Row } from '../../sql-rows.js';
import { testMatchStatements as shared } from '../../statements/test-matches.js';
import { sharedStatement, statement, type Sql } from '../sql.js';

const bump = statement(
  'testMatches.bump',
  `UPDATE test_matches SET lead_id = $4, endpoint = $5, event_id = $6, matched_by = $7, own = $8, calls = calls + 1, last_at = greatest(last_at, $9)
   WHERE integration_id = $1 AND key_id = $2 AND contact_id = $3`,
);
const add = sharedStatement(shared.add);
const count = statement<{ n: number }>(
  'testMatches.count',
  'SELECT count(*)::int AS n FROM test_matches WHERE integration_id = $1',
);
const countOfKey = statement<{ n: number }>(
  'testMatches.countOfKey',
  'SELECT count(*)::int AS n FROM test_matches WHERE integration_id = $1 AND key_id = $2',
);
const first = sharedStatement<Row>(shared.first);
const next = sharedStatement<Row>(shared.next);
const expire = sharedStatement(shared.expire);

export function pgTestMatchRepo(sql: Sql): TestMatchRepo {
  return {
    record: async (m, maxRows) => {
      const values = [m.leadId, m.endpoint, m.eventId, m.matchedBy, m.own, m.at] as const;
      if ((await bump.run(sql, m.integrationId, m.keyId, m.contactId, ...values)).rowCount === 1) return true;
      if ((await countOfKey.one(sql, m.integrationId, m.keyId))!.n >= maxRows) return false;
      await add.run(sql, m.integrationId, m.keyId, m.contactId, ...values);
      return true;
    },
    page: async (integrationId, limit, after) =>
      (after === null
        ? await first.rows(sql, integrationId, limit)
        : await next.rows(sql, integrationId, after.firstAt, after.keyId, after.contactId, limit)
      ).map(rowToTestMatch),
    count: async (integrationId) => (await count.one(sql, integrationId))!.n,
    deleteBefore: async (before, limit) => (await expire.run(sql, before, limit)).rowCount ?? 0,
  };
}
