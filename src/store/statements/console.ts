// Console users and sessions: the statements both engines run as written. Taking a session's one-time
// value and the keys of ended sessions, and marking keys shown, are each engine's own (PostgreSQL reads
// and deletes in one statement, under row locks; SQLite runs one unit at a time).
import { statements } from './shared.js';

export const consoleUserStatements = statements('consoleUsers', {
  byName: 'SELECT * FROM console_users WHERE name = $1',
  insert:
    'INSERT INTO console_users (id, name, password_hash, workspace_slug, created_at, created_by) VALUES ($1, $2, $3, $4, $5, $6)',
  list: 'SELECT * FROM console_users ORDER BY name',
  disable: 'UPDATE console_users SET disabled_at = $1 WHERE name = $2 AND disabled_at IS NULL',
});

export const consoleSessionStatements = statements('consoleSessions', {
  find: 'SELECT * FROM console_sessions WHERE id_hash = $1',
  insert:
    'INSERT INTO console_sessions (id_hash, user_name, credential_id, created_at, last_seen_at) VALUES ($1, $2, $3, $4, $5)',
  touch: 'UPDATE console_sessions SET last_seen_at = $1 WHERE id_hash = $2',
  delete: 'DELETE FROM console_sessions WHERE id_hash = $1',
  setFlash: 'UPDATE console_sessions SET flash = $1 WHERE id_hash = $2',
  peekFlash: 'SELECT flash FROM console_sessions WHERE id_hash = $1',
  deleteForUser: 'DELETE FROM console_sessions WHERE user_name = $1',
  deleteExpired: 'DELETE FROM console_sessions WHERE last_seen_at < $1 OR created_at < $2',
  holdUnshown:
    'INSERT INTO console_unshown_keys (key_id, integration_id, prefix, id_hash, issued_at) VALUES ($1, $2, $3, $4, $5)',
});
