// Admin credentials in PostgreSQL.
import type { AdminCredentialRepo } from '../../repos/admin-credentials.js';
import { rowToCredential, type AdminCredentialRow as Row } from '../../sql-rows.js';
import { statement, type Sql } from '../sql.js';

const byHash = statement<Row>('adminCredentials.byHash', 'SELECT * FROM admin_credentials WHERE hash = $1');
const byId = statement<Row>('adminCredentials.byId', 'SELECT * FROM admin_credentials WHERE id = $1');
const insert = statement('adminCredentials.insert', 'INSERT INTO admin_credentials (id, name, prefix, hash, created_at, created_by) VALUES ($1, $2, $3, $4, $5, $6)');
const list = statement<Row>('adminCredentials.list', 'SELECT * FROM admin_credentials ORDER BY name, created_at');
const revoke = statement('adminCredentials.revoke', 'UPDATE admin_credentials SET revoked_at = $1 WHERE name = $2 AND revoked_at IS NULL');

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
