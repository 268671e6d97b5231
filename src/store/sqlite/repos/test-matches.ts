// Live persons found by test calls, in SQLite (migration 21): the shared statements
// (src/store/statements/test-matches.ts), the bump and the counts.
import type { Db } from '../connection.js';
import { prepareShared } from '../shared.js';
import type { TestMatchRepo } from '../../repos/test-matches.js';
import { rowToTestMatch, type TestMatchRow as Row } from '../../sql-rows.js';
import { testMatchStatements as shared } from '../../statements/test-matches.js';

export function sqliteTestMatchRepo(db: Db): TestMatchRepo {
  const bump = db.prepare(
    `UPDATE test_matches SET lead_id = @leadId, endpoint = @endpoint, event_id = @eventId, matched_by = @matchedBy, own = @own,
       calls = calls + 1, last_at = max(last_at, @at)
     WHERE integration_id = @integrationId AND key_id = @keyId AND contact_id = @contactId`,
  );
  const add = prepareShared(db, shared.add);
  const count = db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM test_matches WHERE integration_id = ?');
  const countOfKey = db.prepare<[string, string], { n: number }>(
    'SELECT count(*) AS n FROM test_matches WHERE integration_id = ? AND key_id = ?',
  );
  const first = prepareShared<Row>(db, shared.first);
  const next = prepareShared<Row>(db, shared.next);
  const expire = prepareShared(db, shared.expire);
  return {
    record: async (m, maxRows) => {
      const own = m.own ? 1 : 0;
      if (bump.run({ ...m, own }).changes > 0) return true;
      if (countOfKey.get(m.integrationId, m.keyId)!.n >= maxRows) return false;
      add.run(m.integrationId, m.keyId, m.contactId, m.leadId, m.endpoint, m.eventId, m.matchedBy, own, m.at);
      return true;
    },
    page: async (integrationId, limit, after) =>
      (after === null
        ? first.all(integrationId, limit)
        : next.all(integrationId, after.firstAt, after.keyId, after.contactId, limit)
      ).map(rowToTestMatch),
    count: async (integrationId) => count.get(integrationId)!.n,
    deleteBefore: async (before, limit) => expire.run(before, limit).changes,
  };
}
