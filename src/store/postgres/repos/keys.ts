// API keys in PostgreSQL.
import type { KeyRepo } from '../../repos/keys.js';
import { rowToKey, type KeyRow } from '../../sql-rows.js';
import { statement, type Sql } from '../sql.js';

const byHash = statement<KeyRow>('keys.byHash', 'SELECT * FROM api_keys WHERE hash = $1');
const insert = statement(
  'keys.insert',
  `INSERT INTO api_keys (id, integration_id, kind, prefix, hash, created_at, created_by, revoked_at)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
   ON CONFLICT (hash) DO NOTHING`,
);
const list = statement<KeyRow>('keys.list', 'SELECT * FROM api_keys WHERE integration_id = $1 ORDER BY created_at, id');
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
    listForIntegration: async (integrationId) => (await list.rows(sql, integrationId)).map(rowToKey),
  };
}
