// Stored brownout windows in PostgreSQL: the shared statements (src/store/statements/brownouts.ts).
import type { BrownoutRepo } from '../../repos/brownouts.js';
import { brownoutValues, rowToBrownout, type BrownoutRow } from '../../brownout-rows.js';
import { brownoutStatements as shared } from '../../statements/brownouts.js';
import { sharedStatement, type Sql } from '../sql.js';

const list = sharedStatement<BrownoutRow>(shared.list);
const insert = sharedStatement(shared.insert);
const remove = sharedStatement(shared.remove);
const between = sharedStatement<BrownoutRow>(shared.between);
const expire = sharedStatement(shared.expire);

export function pgBrownoutRepo(sql: Sql): BrownoutRepo {
  return {
    list: async (integrationId) => (await list.rows(sql, integrationId)).map(rowToBrownout),
    insert: async (window) => void (await insert.run(sql, ...brownoutValues(window))),
    remove: async (integrationId, id) => (await remove.run(sql, integrationId, id)).rowCount === 1,
    between: async (since, until) => (await between.rows(sql, since, until)).map(rowToBrownout),
    deleteEndedBefore: async (before, limit) => (await expire.run(sql, before, limit)).rowCount ?? 0,
  };
}
