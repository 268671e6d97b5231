// Admin credentials in PostgreSQL: every statement shared (src/store/statements/admin-credentials.ts).
import type { AdminCredentialRepo } from '../../repos/admin-credentials.js';
import { rowToCredential, type AdminCredentialRow as Row } from '../../sql-rows.js';
import { adminCredentialStatements as shared } from '../../statements/admin-credentials.js';
import { sharedStatement, type Sql } from '../sql.js';

const byHash = sharedStatement<Row>(shared.byHash);
const byId = sharedStatement<Row>(shared.byId);
const insert = sharedStatement(shared.insert);
const list = sharedStatement<Row>(shared.list);
const revoke = sharedStatement(shared.revoke);

export function pgAdminCredentialRepo(sql: Sql): AdminCredentialRepo {
  return {
    findByHash: async (hash) => {
      const row = await byHash.one(sql, hash);
      return row ? rowToCredential(row) : null;
    },
    findById: async (id) => {
      const row = await byId.one(sql, id);
      return row ? rowToCredential(row) : null;
    },
    insert: async (c) => void (await insert.run(sql, c.id, c.name, c.prefix, c.hash, c.createdAt, c.createdBy)),
    list: async () => (await list.rows(sql)).map(rowToCredential),
    revokeByName: async (name, at) => (await revoke.run(sql, at, name)).rowCount ?? 0,
  };
}
