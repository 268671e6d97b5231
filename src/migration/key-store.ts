// API keys, stored only as a SHA-256 hash with a short readable prefix. SQL only.
import type { Db } from '../db/connection.js';

export type KeyKind = 'v1' | 'legacy';

export interface ApiKey {
  id: string;
  integrationId: string;
  kind: KeyKind;
  prefix: string;
  hash: string;
  createdAt: string;
  createdBy: string;
  revokedAt: string | null;
}

export interface KeyRepo {
  findByHash(hash: string): Promise<ApiKey | null>;
  insert(key: ApiKey): Promise<void>;
  listForIntegration(integrationId: string): Promise<ApiKey[]>;
  /** Revokes every live key of the integration; returns how many. */
  revokeAll(integrationId: string, at: string): Promise<number>;
  /** Revokes one key if it is live; false when it was revoked already. */
  revoke(id: string, at: string): Promise<boolean>;
}

interface KeyRow {
  id: string;
  integration_id: string;
  kind: KeyKind;
  prefix: string;
  hash: string;
  created_at: string;
  created_by: string;
  revoked_at: string | null;
}

const rowToKey = (r: KeyRow): ApiKey => ({
  id: r.id,
  integrationId: r.integration_id,
  kind: r.kind,
  prefix: r.prefix,
  hash: r.hash,
  createdAt: r.created_at,
  createdBy: r.created_by,
  revokedAt: r.revoked_at,
});

export function sqliteKeyRepo(db: Db): KeyRepo {
  const byHash = db.prepare<[string], KeyRow>('SELECT * FROM api_keys WHERE hash = ?');
  const insert = db.prepare(
    `INSERT INTO api_keys (id, integration_id, kind, prefix, hash, created_at, created_by, revoked_at)
     VALUES (@id, @integrationId, @kind, @prefix, @hash, @createdAt, @createdBy, @revokedAt)`,
  );
  const list = db.prepare<[string], KeyRow>('SELECT * FROM api_keys WHERE integration_id = ? ORDER BY created_at, id');
  const revokeAll = db.prepare('UPDATE api_keys SET revoked_at = ? WHERE integration_id = ? AND revoked_at IS NULL');
  const revoke = db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL');
  return {
    revoke: async (id, at) => revoke.run(at, id).changes === 1,
    revokeAll: async (integrationId, at) => revokeAll.run(at, integrationId).changes,
    findByHash: async (hash) => {
      const row = byHash.get(hash);
      return row ? rowToKey(row) : null;
    },
    insert: async (key) => void insert.run(key),
    listForIntegration: async (integrationId) => list.all(integrationId).map(rowToKey),
  };
}
