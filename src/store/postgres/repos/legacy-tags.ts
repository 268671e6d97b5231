// Legacy tags in PostgreSQL: the shared statements (src/store/statements/legacy-tags.ts) and the count.
import type { LegacyTagRepo } from '../../repos/legacy-tags.js';
import { rowToTag, type LegacyTagRow as Row } from '../../sql-rows.js';
import { legacyTagStatements as shared } from '../../statements/legacy-tags.js';
import { sharedStatement, statement, type Sql } from '../sql.js';

const get = sharedStatement<Row>(shared.get);
const insert = sharedStatement(shared.insert);
const list = sharedStatement<Row>(shared.list);
const count = statement<{ n: number }>(
  'legacyTags.count',
  'SELECT count(*)::int AS n FROM legacy_tags WHERE workspace_id = $1',
);

export function pgLegacyTagRepo(sql: Sql): LegacyTagRepo {
  return {
    get: async (workspaceId, id) => {
      const row = await get.one(sql, workspaceId, id);
      return row ? rowToTag(row) : null;
    },
    ensure: async (tag) => {
      await insert.run(sql, tag.workspaceId, tag.id, tag.name, tag.color, tag.createdAt);
      return rowToTag((await get.one(sql, tag.workspaceId, tag.id))!);
    },
    list: async (workspaceId) => (await list.rows(sql, workspaceId)).map(rowToTag),
    count: async (workspaceId) => (await count.one(sql, workspaceId))!.n,
  };
}
