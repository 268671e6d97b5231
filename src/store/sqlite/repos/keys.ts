// API keys in SQLite.
import type { Db } from '../connection.js';
import type { KeyRepo } from '../../repos/keys.js';
import { rowToKey, rowToListedKey, type KeyRow } from '../../sql-rows.js';

export function sqliteKeyRepo(db: Db): KeyRepo {
  const byHash = db.prepare<[string], KeyRow>('SELECT * FROM api_keys WHERE hash = ?');
  const insert = db.prepare(
    `INSERT INTO api_keys (id, integration_id, kind, prefix, hash, created_at, created_by, revoked_at)
     VALUES (@id, @integrationId, @kind, @prefix, @hash, @createdAt, @createdBy, @revokedAt)
     ON CONFLICT (hash) DO NOTHING`,
  );
  const list = db.prepare<[string], KeyRow & { last_used_at: string | null }>(
    'SELECT k.*, u.last_used_at FROM api_keys k LEFT JOIN key_usage u ON u.key_id = k.id WHERE k.integration_id = ? ORDER BY k.created_at, k.id',
  );
  const used = db.prepare(
    'INSERT INTO key_usage (key_id, last_used_at) VALUES (?, ?) ON CONFLICT (key_id) DO UPDATE SET last_used_at = max(last_used_at, excluded.last_used_at)',
  );
  const revokeAll = db.prepare('UPDATE api_keys SET revoked_at = ? WHERE integration_id = ? AND revoked_at IS NULL');
  const revoke = db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL');
  return {
    revoke: async (id, at) => revoke.run(at, id).changes === 1,
    revokeAll: async (integrationId, at) => revokeAll.run(at, integrationId).changes,
    findByHash: async (hash) => {
      const row = byHash.get(hash);
      return row ? rowToKey(row) : null;
    },
    insert: async (key) => insert.run(key).changes === 1,
    listForIntegration: async (integrationId) => list.all(integrationId).map(rowToListedKey),
    markUsed: async (uses) => {
      for (const u of uses) used.run(u.keyId, u.at);
    },
  };
}
