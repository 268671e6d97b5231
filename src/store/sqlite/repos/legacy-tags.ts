// Legacy tags in SQLite: the shared statements (src/store/statements/legacy-tags.ts) and the count.
import type { Db } from '../connection.js';
import { prepareShared } from '../shared.js';
import type { LegacyTagRepo } from '../../repos/legacy-tags.js';
import { rowToTag, type LegacyTagRow as Row } from '../../sql-rows.js';
import { legacyTagStatements as shared } from '../../statements/legacy-tags.js';

export function sqliteLegacyTagRepo(db: Db): LegacyTagRepo {
  const get = prepareShared<Row>(db, shared.get);
  const insert = prepareShared(db, shared.insert);
  const list = prepareShared<Row>(db, shared.list);
  const count = db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM legacy_tags WHERE workspace_id = ?');
  return {
    get: async (workspaceId, id) => {
      const row = get.get(workspaceId, id);
      return row ? rowToTag(row) : null;
    },
    ensure: async (tag) => {
      insert.run(tag.workspaceId, tag.id, tag.name, tag.color, tag.createdAt);
      return rowToTag(get.get(tag.workspaceId, tag.id)!);
    },
    list: async (workspaceId) => list.all(workspaceId).map(rowToTag),
    count: async (workspaceId) => count.get(workspaceId)!.n,
  };
}
