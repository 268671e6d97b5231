// Console users and sessions in PostgreSQL: the shared statements (src/store/statements/console.ts)
// and PostgreSQL's own ways of taking a one-time value and the keys of ended sessions, in one statement each.
import type { ConsoleSessionRepo, ConsoleUserRepo } from '../../repos/console.js';
import {
  rowToConsoleSession,
  rowToConsoleUser,
  type ConsoleSessionRow,
  type ConsoleUserRow,
} from '../../console-rows.js';
import { consoleSessionStatements as sessions, consoleUserStatements as users } from '../../statements/console.js';
import { sharedStatement, statement, type Sql } from '../sql.js';

const userByName = sharedStatement<ConsoleUserRow>(users.byName);
const insertUser = sharedStatement(users.insert);
const listUsers = sharedStatement<ConsoleUserRow>(users.list);
const disableUser = sharedStatement(users.disable);

export function pgConsoleUserRepo(sql: Sql): ConsoleUserRepo {
  return {
    findByName: async (name) => {
      const row = await userByName.one(sql, name);
      return row ? rowToConsoleUser(row) : null;
    },
    insert: async (u) =>
      void (await insertUser.run(sql, u.id, u.name, u.passwordHash, u.workspace, u.createdAt, u.createdBy)),
    list: async () => (await listUsers.rows(sql)).map(rowToConsoleUser),
    disable: async (name, at) => (await disableUser.run(sql, at, name)).rowCount ?? 0,
  };
}

const findSession = sharedStatement<ConsoleSessionRow>(sessions.find);
const insertSession = sharedStatement(sessions.insert);
const touchSession = sharedStatement(sessions.touch);
const deleteSession = sharedStatement(sessions.delete);
const setFlash = sharedStatement(sessions.setFlash);
// One statement reads and clears, under the row's lock whether or not a value waits: a second change of
// the session's value (another tab's, another replica's) waits, then reads what the first left.
const takeFlash = statement<{ flash: string }>(
  'consoleSessions.takeFlash',
  'UPDATE console_sessions s SET flash = NULL FROM (SELECT id_hash, flash FROM console_sessions WHERE id_hash = $1 FOR UPDATE) old WHERE s.id_hash = old.id_hash RETURNING old.flash',
);
const peekFlash = sharedStatement<{ flash: string | null }>(sessions.peekFlash);
const deleteForUser = sharedStatement(sessions.deleteForUser);
const deleteExpired = sharedStatement(sessions.deleteExpired);

const holdUnshown = sharedStatement(sessions.holdUnshown);
const shownUnshown = statement(
  'consoleSessions.shownUnshown',
  'DELETE FROM console_unshown_keys WHERE key_id = ANY($1::text[])',
);
const takeEnded = statement<{ key_id: string; integration_id: string; prefix: string }>(
  'consoleSessions.takeUnshownOfEnded',
  `DELETE FROM console_unshown_keys WHERE key_id IN (
     SELECT key_id FROM console_unshown_keys u WHERE NOT EXISTS (SELECT 1 FROM console_sessions s WHERE s.id_hash = u.id_hash)
     ORDER BY issued_at LIMIT $1 FOR UPDATE SKIP LOCKED)
   RETURNING key_id, integration_id, prefix`,
);

export function pgConsoleSessionRepo(sql: Sql): ConsoleSessionRepo {
  return {
    find: async (idHash) => {
      const row = await findSession.one(sql, idHash);
      return row ? rowToConsoleSession(row) : null;
    },
    insert: async (s) =>
      void (await insertSession.run(sql, s.idHash, s.userName, s.credentialId, s.createdAt, s.lastSeenAt)),
    touch: async (idHash, at) => void (await touchSession.run(sql, at, idHash)),
    delete: async (idHash) => void (await deleteSession.run(sql, idHash)),
    setFlash: async (idHash, sealed) => void (await setFlash.run(sql, sealed, idHash)),
    holdUnshown: async (k) => void (await holdUnshown.run(sql, k.keyId, k.integrationId, k.prefix, k.idHash, k.at)),
    shownUnshown: async (keyIds) => void (keyIds.length > 0 ? await shownUnshown.run(sql, [...keyIds]) : undefined),
    takeUnshownOfEndedSessions: async (limit) =>
      (await takeEnded.rows(sql, limit)).map((r) => ({
        keyId: r.key_id,
        integrationId: r.integration_id,
        prefix: r.prefix,
      })),
    takeFlash: async (idHash) => (await takeFlash.one(sql, idHash))?.flash ?? null,
    peekFlash: async (idHash) => (await peekFlash.one(sql, idHash))?.flash ?? null,
    deleteForUser: async (userName) => (await deleteForUser.run(sql, userName)).rowCount ?? 0,
    deleteExpired: async (idleBefore, openedBefore) =>
      (await deleteExpired.run(sql, idleBefore, openedBefore)).rowCount ?? 0,
  };
}
