// Admin credentials in SQLite: every statement shared (src/store/statements/admin-credentials.ts).
import type { Db } from '../connection.js';
import { prepareShared } from '../shared.js';
import type { AdminCredentialRepo } from '../../repos/admin-credentials.js';
import { rowToCredential, type AdminCredentialRow as Row } from '../../sql-rows.js';
import { adminCredentialStatements as shared } from '../../statements/admin-credentials.js';

export function sqliteAdminCredentialRepo(db: Db): AdminCredentialRepo {
  const byHash = prepareShared<Row>(db, shared.byHash);
  const byId = prepareShared<Row>(db, shared.byId);
  const insert = prepareShared(db, shared.insert);
  const list = prepareShared<Row>(db, shared.list);
  const revoke = prepareShared(db, shared.revoke);
  return {
    findByHash: async (hash) => {
      const row = byHash.get(hash);
      return row ? rowToCredential(row) : null;
    },
    findById: async (id) => {
      const row = byId.get(id);
      return row ? rowToCredential(row) : null;
    },
    insert: async (c) => void insert.run(c.id, c.name, c.prefix, c.hash, c.createdAt, c.createdBy),
    list: async () => list.all().map(rowToCredential),
    revokeByName: async (name, at) => revoke.run(at, name).changes,
  };
}
