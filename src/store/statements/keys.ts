// API keys: the statements both engines run as written.
import { statements } from './shared.js';

export const keyStatements = statements('keys', {
  byHash: 'SELECT * FROM api_keys WHERE hash = $1',
  insert: `INSERT INTO api_keys (id, integration_id, kind, prefix, hash, created_at, created_by, revoked_at)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
   ON CONFLICT (hash) DO NOTHING`,
  list: 'SELECT k.*, u.last_used_at FROM api_keys k LEFT JOIN key_usage u ON u.key_id = k.id WHERE k.integration_id = $1 ORDER BY k.created_at, k.id',
  revokeAll: 'UPDATE api_keys SET revoked_at = $1 WHERE integration_id = $2 AND revoked_at IS NULL',
  revoke: 'UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL',
});
