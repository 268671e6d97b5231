// Admin credentials: the statements both engines run as written (all of them).
import { statements } from './shared.js';

export const adminCredentialStatements = statements('adminCredentials', {
  byHash: 'SELECT * FROM admin_credentials WHERE hash = $1',
  byId: 'SELECT * FROM admin_credentials WHERE id = $1',
  insert:
    'INSERT INTO admin_credentials (id, name, prefix, hash, created_at, created_by) VALUES ($1, $2, $3, $4, $5, $6)',
  list: 'SELECT * FROM admin_credentials ORDER BY name, created_at',
  revoke: 'UPDATE admin_credentials SET revoked_at = $1 WHERE name = $2 AND revoked_at IS NULL',
});
