// Legacy tags in SQLite.
import type { Db } from '../connection.js';
import type { LegacyTagRepo } from '../../repos/legacy-tags.js';
import { rowToTag, type LegacyTagRow as Row } from '../../sql-rows.js';

export function sqliteLegacyTagRepo(db: Db): LegacyTagRepo {
  const get = db.prepare<[string, string], Row>('SELECT * FROM legacy_tags WHERE workspace_id = ? AND id = ?');
  const insert = db.prepare(
    `INSERT INTO legacy_tags (workspace_id, id, name, color, created_at) VALUES (@workspaceId, @id, @name, @color, @createdAt)
     ON CONFLICT (workspace_id, id) DO NOTHING`,
  );
  const list = db.prepare<[string], Row>('SELECT * FROM legacy_tags WHERE workspace_id = ? ORDER BY name');
  const count = db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM legacy_tags WHERE workspace_id = ?');
  return {
    get: async (workspaceId, id) => {
      const row = get.get(workspaceId, id);
      return row ? rowToTag(row) : null;
    },
    ensure: async (tag) => {
      insert.run(tag);
      return rowToTag(get.get(tag.workspaceId, tag.id)!);
    },
    list: async (workspaceId) => list.all(workspaceId).map(rowToTag),
    count: async (workspaceId) => count.get(workspaceId)!.n,
  };
}
