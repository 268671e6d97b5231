// Legacy tags in PostgreSQL.
import type { LegacyTag, LegacyTagRepo } from '../../repos/legacy-tags.js';
import { statement, type Sql } from '../sql.js';

interface Row {
  workspace_id: string;
  id: string;
  name: string;
  color: string | null;
  created_at: string;
}

const rowToTag = (r: Row): LegacyTag => ({ workspaceId: r.workspace_id, id: r.id, name: r.name, color: r.color, createdAt: r.created_at });

const get = statement<Row>('legacyTags.get', 'SELECT * FROM legacy_tags WHERE workspace_id = $1 AND id = $2');
const insert = statement(
  'legacyTags.insert',
  'INSERT INTO legacy_tags (workspace_id, id, name, color, created_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (workspace_id, id) DO NOTHING',
);
const list = statement<Row>('legacyTags.list', 'SELECT * FROM legacy_tags WHERE workspace_id = $1 ORDER BY name');

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
  };
}
