// Legacy tags in PostgreSQL.
import type { LegacyTagRepo } from '../../repos/legacy-tags.js';
import { rowToTag, type LegacyTagRow as Row } from '../../sql-rows.js';
import { statement, type Sql } from '../sql.js';

const get = statement<Row>('legacyTags.get', 'SELECT * FROM legacy_tags WHERE workspace_id = $1 AND id = $2');
const insert = statement(
  'legacyTags.insert',
  'INSERT INTO legacy_tags (workspace_id, id, name, color, created_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (workspace_id, id) DO NOTHING',
);
const list = statement<Row>('legacyTags.list', 'SELECT * FROM legacy_tags WHERE workspace_id = $1 ORDER BY name');
const count = statement<{ n: number }>('legacyTags.count', 'SELECT count(*)::int AS n FROM legacy_tags WHERE workspace_id = $1');

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
