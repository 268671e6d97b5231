// Stored brownout windows in SQLite: the shared statements (src/store/statements/brownouts.ts).
import type { BrownoutRepo } from '../../repos/brownouts.js';
import { brownoutValues, rowToBrownout, type BrownoutRow } from '../../brownout-rows.js';
import { brownoutStatements as shared } from '../../statements/brownouts.js';
import type { Db } from '../connection.js';
import { prepareShared } from '../shared.js';

export function sqliteBrownoutRepo(db: Db): BrownoutRepo {
  const list = prepareShared<BrownoutRow>(db, shared.list);
  const insert = prepareShared(db, shared.insert);
  const remove = prepareShared(db, shared.remove);
  const between = prepareShared<BrownoutRow>(db, shared.between);
  const expire = prepareShared(db, shared.expire);
  return {
    list: async (integrationId) => list.all(integrationId).map(rowToBrownout),
    insert: async (window) => void insert.run(...brownoutValues(window)),
    remove: async (integrationId, id) => remove.run(integrationId, id).changes === 1,
    between: async (since, until) => between.all(since, until).map(rowToBrownout),
    deleteEndedBefore: async (before, limit) => expire.run(before, limit).changes,
  };
}
