// Admin credentials in SQLite.
import type { Db } from '../connection.js';
import type { AdminCredentialRepo } from '../../repos/admin-credentials.js';
import { rowToCredential, type AdminCredentialRow as Row } from '../../sql-rows.js';

export function sqliteAdminCredentialRepo(db: Db): AdminCredentialRepo {
  const byHash = db.prepare<[string], Row>('SELECT * FROM admin_credentials WHERE hash = ?');
  const byId = db.prepare<[string], Row>('SELECT * FROM admin_credentials WHERE id = ?');
  const insert = db.prepare(
    'INSERT INTO admin_credentials (id, name, prefix, hash, created_at, created_by) VALUES (@id, @name, @prefix, @hash, @createdAt, @createdBy)',
  );
  const list = db.prepare<[], Row>('SELECT * FROM admin_credentials ORDER BY name, created_at');
  const revoke = db.prepare('UPDATE admin_credentials SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL');
  return {
    findByHash: async (hash) => {
      const row = byHash.get(hash);
      return row ? rowToCredential(row) : null;
    },
    findById: async (id) => {
      const row = byId.get(id);
      return row ? rowToCredential(row) : null;
    },
    insert: async (c) => void insert.run(c),
    list: async () => list.all().map(rowToCredential),
    revokeByName: async (name, at) => revoke.run(at, name).changes,
  };
}
