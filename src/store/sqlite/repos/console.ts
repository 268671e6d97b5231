// Console users and sessions in SQLite.
import type { Db } from '../connection.js';
import type { ConsoleSessionRepo, ConsoleUserRepo } from '../../repos/console.js';
import { rowToConsoleSession, rowToConsoleUser, type ConsoleSessionRow, type ConsoleUserRow } from '../../console-rows.js';

export function sqliteConsoleUserRepo(db: Db): ConsoleUserRepo {
  const byName = db.prepare<[string], ConsoleUserRow>('SELECT * FROM console_users WHERE name = ?');
  const insert = db.prepare(
    'INSERT INTO console_users (id, name, password_hash, workspace_slug, created_at, created_by) VALUES (@id, @name, @passwordHash, @workspace, @createdAt, @createdBy)',
  );
  const list = db.prepare<[], ConsoleUserRow>('SELECT * FROM console_users ORDER BY name');
  const disable = db.prepare('UPDATE console_users SET disabled_at = ? WHERE name = ? AND disabled_at IS NULL');
  return {
    findByName: async (name) => {
      const row = byName.get(name);
      return row ? rowToConsoleUser(row) : null;
    },
    insert: async (u) => void insert.run({ id: u.id, name: u.name, passwordHash: u.passwordHash, workspace: u.workspace, createdAt: u.createdAt, createdBy: u.createdBy }),
    list: async () => list.all().map(rowToConsoleUser),
    disable: async (name, at) => disable.run(at, name).changes,
  };
}

export function sqliteConsoleSessionRepo(db: Db): ConsoleSessionRepo {
  const find = db.prepare<[string], ConsoleSessionRow>('SELECT * FROM console_sessions WHERE id_hash = ?');
  const insert = db.prepare('INSERT INTO console_sessions (id_hash, user_name, credential_id, created_at, last_seen_at) VALUES (@idHash, @userName, @credentialId, @createdAt, @lastSeenAt)');
  const touch = db.prepare('UPDATE console_sessions SET last_seen_at = ? WHERE id_hash = ?');
  const remove = db.prepare('DELETE FROM console_sessions WHERE id_hash = ?');
  const setFlash = db.prepare('UPDATE console_sessions SET flash = ? WHERE id_hash = ?');
  const findFlash = db.prepare<[string], { flash: string | null }>('SELECT flash FROM console_sessions WHERE id_hash = ?');
  const clearFlash = db.prepare('UPDATE console_sessions SET flash = NULL WHERE id_hash = ? AND flash IS NOT NULL');
  const removeForUser = db.prepare('DELETE FROM console_sessions WHERE user_name = ?');
  const removeExpired = db.prepare('DELETE FROM console_sessions WHERE last_seen_at < ? OR created_at < ?');
  const hold = db.prepare('INSERT INTO console_unshown_keys (key_id, integration_id, prefix, id_hash, issued_at) VALUES (@keyId, @integrationId, @prefix, @idHash, @at)');
  const shown = db.prepare('DELETE FROM console_unshown_keys WHERE key_id = ?');
  const ended = db.prepare<[number], { key_id: string; integration_id: string; prefix: string }>(
    `SELECT key_id, integration_id, prefix FROM console_unshown_keys u
     WHERE NOT EXISTS (SELECT 1 FROM console_sessions s WHERE s.id_hash = u.id_hash) ORDER BY issued_at LIMIT ?`,
  );
  return {
    find: async (idHash) => {
      const row = find.get(idHash);
      return row ? rowToConsoleSession(row) : null;
    },
    insert: async (s) => void insert.run(s),
    touch: async (idHash, at) => void touch.run(at, idHash),
    delete: async (idHash) => void remove.run(idHash),
    setFlash: async (idHash, sealed) => void setFlash.run(sealed, idHash),
    // Units run one at a time on SQLite: the read and the clear cannot interleave with another take.
    peekFlash: async (idHash) => findFlash.get(idHash)?.flash ?? null,
    takeFlash: async (idHash) => {
      const flash = findFlash.get(idHash)?.flash ?? null;
      if (flash !== null) clearFlash.run(idHash);
      return flash;
    },
    holdUnshown: async (key) => void hold.run(key),
    shownUnshown: async (keyIds) => {
      for (const id of keyIds) shown.run(id);
    },
    takeUnshownOfEndedSessions: async (limit) => {
      const rows = ended.all(limit);
      for (const r of rows) shown.run(r.key_id);
      return rows.map((r) => ({ keyId: r.key_id, integrationId: r.integration_id, prefix: r.prefix }));
    },
    deleteForUser: async (userName) => removeForUser.run(userName).changes,
    deleteExpired: async (idleBefore, openedBefore) => removeExpired.run(idleBefore, openedBefore).changes,
  };
}
