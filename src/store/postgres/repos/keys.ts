// API keys in PostgreSQL.
import type { KeyRepo } from '../../repos/keys.js';
import { rowToKey, rowToListedKey, type KeyRow } from '../../sql-rows.js';
import { statement, type Sql } from '../sql.js';

const byHash = statement<KeyRow>('keys.byHash', 'SELECT * FROM api_keys WHERE hash = $1');
const insert = statement(
  'keys.insert',
  `INSERT INTO api_keys (id, integration_id, kind, prefix, hash, created_at, created_by, revoked_at)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
   ON CONFLICT (hash) DO NOTHING`,
);
const list = statement<KeyRow & { last_used_at: string | null }>(
  'keys.list',
  'SELECT k.*, u.last_used_at FROM api_keys k LEFT JOIN key_usage u ON u.key_id = k.id WHERE k.integration_id = $1 ORDER BY k.created_at, k.id',
);
// Every use in one statement; rows taken in key order, so two replicas flushing the same keys at once
// lock them in the same order and never deadlock.
const used = statement(
  'keys.markUsed',
  `INSERT INTO key_usage (key_id, last_used_at)
   SELECT key_id, last_used_at FROM unnest($1::text[], $2::text[]) AS u (key_id, last_used_at) ORDER BY key_id
   ON CONFLICT (key_id) DO UPDATE SET last_used_at = GREATEST(key_usage.last_used_at, excluded.last_used_at)`,
);
const revokeAll = statement('keys.revokeAll', 'UPDATE api_keys SET revoked_at = $1 WHERE integration_id = $2 AND revoked_at IS NULL');
const revoke = statement('keys.revoke', 'UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL');

export function pgKeyRepo(sql: Sql): KeyRepo {
  return {
    revoke: async (id, at) => (await revoke.run(sql, at, id)).rowCount === 1,
    revokeAll: async (integrationId, at) => (await revokeAll.run(sql, at, integrationId)).rowCount ?? 0,
    findByHash: async (hash) => {
      const row = await byHash.one(sql, hash);
      return row ? rowToKey(row) : null;
    },
    insert: async (k) => (await insert.run(sql, k.id, k.integrationId, k.kind, k.prefix, k.hash, k.createdAt, k.createdBy, k.revokedAt)).rowCount === 1,
    listForIntegration: async (integrationId) => (await list.rows(sql, integrationId)).map(rowToListedKey),
    markUsed: async (uses) => {
      if (uses.length === 0) return;
      const sorted = [...uses].sort((a, b) => (a.keyId < b.keyId ? -1 : a.keyId > b.keyId ? 1 : 0));
      await used.run(
        sql,
        sorted.map((u) => u.keyId),
        sorted.map((u) => u.at),
      );
    },
  };
}
