// Admin credentials in SQLite.
import type { Db } from '../connection.js';
import type { AdminCredential, AdminCredentialRepo } from '../../repos/admin-credentials.js';

interface Row {
  id: string;
  name: string;
  prefix: string;
  hash: string;
  created_at: string;
  created_by: string;
  revoked_at: string | null;
}

const rowToCredential = (r: Row): AdminCredential => ({
  id: r.id,
  name: r.name,
  prefix: r.prefix,
  hash: r.hash,
  createdAt: r.created_at,
  createdBy: r.created_by,
  revokedAt: r.revoked_at,
});

export function sqliteAdminCredentialRepo(db: Db): AdminCredentialRepo {
  const byHash = db.prepare<[string], Row>('SELECT * FROM admin_credentials WHERE hash = ?');
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
    insert: async (c) => void insert.run(c),
    list: async () => list.all().map(rowToCredential),
    revokeByName: async (name, at) => revoke.run(at, name).changes,
  };
}
