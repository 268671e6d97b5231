// Console users and sessions in SQLite: the shared statements (src/store/statements/console.ts) and
// SQLite's own ways of taking a one-time value and the keys of ended sessions.
import type { Db } from '../connection.js';
import { prepareShared } from '../shared.js';
import type { ConsoleSessionRepo, ConsoleUserRepo } from '../../repos/console.js';
import {
  rowToConsoleSession,
  rowToConsoleUser,
  type ConsoleSessionRow,
  type ConsoleUserRow,
} from '../../console-rows.js';
import { consoleSessionStatements as sessions, consoleUserStatements as users } from '../../statements/console.js';

export function sqliteConsoleUserRepo(db: Db): ConsoleUserRepo {
  const byName = prepareShared<ConsoleUserRow>(db, users.byName);
  const insert = prepareShared(db, users.insert);
  const list = prepareShared<ConsoleUserRow>(db, users.list);
  const disable = prepareShared(db, users.disable);
  return {
    findByName: async (name) => {
      const row = byName.get(name);
      return row ? rowToConsoleUser(row) : null;
    },
    insert: async (u) => void insert.run(u.id, u.name, u.passwordHash, u.workspace, u.createdAt, u.createdBy),
    list: async () => list.all().map(rowToConsoleUser),
    disable: async (name, at) => disable.run(at, name).changes,
  };
}

export function sqliteConsoleSessionRepo(db: Db): ConsoleSessionRepo {
  const find = prepareShared<ConsoleSessionRow>(db, sessions.find);
  const insert = prepareShared(db, sessions.insert);
  const touch = prepareShared(db, sessions.touch);
  const remove = prepareShared(db, sessions.delete);
  const setFlash = prepareShared(db, sessions.setFlash);
  const findFlash = prepareShared<{ flash: string | null }>(db, sessions.peekFlash);
  const clearFlash = db.prepare('UPDATE console_sessions SET flash = NULL WHERE id_hash = ? AND flash IS NOT NULL');
  const removeForUser = prepareShared(db, sessions.deleteForUser);
  const removeExpired = prepareShared(db, sessions.deleteExpired);
  const hold = prepareShared(db, sessions.holdUnshown);
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
    insert: async (s) => void insert.run(s.idHash, s.userName, s.credentialId, s.createdAt, s.lastSeenAt),
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
    holdUnshown: async (k) => void hold.run(k.keyId, k.integrationId, k.prefix, k.idHash, k.at),
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
