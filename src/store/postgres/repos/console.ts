// Console users and sessions in PostgreSQL.
import type { ConsoleSessionRepo, ConsoleUserRepo } from '../../repos/console.js';
import { rowToConsoleSession, rowToConsoleUser, type ConsoleSessionRow, type ConsoleUserRow } from '../../console-rows.js';
import { statement, type Sql } from '../sql.js';

const userByName = statement<ConsoleUserRow>('consoleUsers.byName', 'SELECT * FROM console_users WHERE name = $1');
const insertUser = statement(
  'consoleUsers.insert',
  'INSERT INTO console_users (id, name, password_hash, workspace_slug, created_at, created_by) VALUES ($1, $2, $3, $4, $5, $6)',
);
const listUsers = statement<ConsoleUserRow>('consoleUsers.list', 'SELECT * FROM console_users ORDER BY name');
const disableUser = statement('consoleUsers.disable', 'UPDATE console_users SET disabled_at = $1 WHERE name = $2 AND disabled_at IS NULL');

export function pgConsoleUserRepo(sql: Sql): ConsoleUserRepo {
  return {
    findByName: async (name) => {
      const row = await userByName.one(sql, name);
      return row ? rowToConsoleUser(row) : null;
    },
    insert: async (u) => void (await insertUser.run(sql, u.id, u.name, u.passwordHash, u.workspace, u.createdAt, u.createdBy)),
    list: async () => (await listUsers.rows(sql)).map(rowToConsoleUser),
    disable: async (name, at) => (await disableUser.run(sql, at, name)).rowCount ?? 0,
  };
}

const findSession = statement<ConsoleSessionRow>('consoleSessions.find', 'SELECT * FROM console_sessions WHERE id_hash = $1');
const insertSession = statement('consoleSessions.insert', 'INSERT INTO console_sessions (id_hash, user_name, credential_id, created_at, last_seen_at) VALUES ($1, $2, $3, $4, $5)');
const touchSession = statement('consoleSessions.touch', 'UPDATE console_sessions SET last_seen_at = $1 WHERE id_hash = $2');
const deleteSession = statement('consoleSessions.delete', 'DELETE FROM console_sessions WHERE id_hash = $1');
const setFlash = statement('consoleSessions.setFlash', 'UPDATE console_sessions SET flash = $1 WHERE id_hash = $2');
// One statement reads and clears, under the row's lock whether or not a value waits: a second change of
// the session's value (another tab's, another replica's) waits, then reads what the first left.
const takeFlash = statement<{ flash: string }>(
  'consoleSessions.takeFlash',
  'UPDATE console_sessions s SET flash = NULL FROM (SELECT id_hash, flash FROM console_sessions WHERE id_hash = $1 FOR UPDATE) old WHERE s.id_hash = old.id_hash RETURNING old.flash',
);
const peekFlash = statement<{ flash: string | null }>('consoleSessions.peekFlash', 'SELECT flash FROM console_sessions WHERE id_hash = $1');
const deleteForUser = statement('consoleSessions.deleteForUser', 'DELETE FROM console_sessions WHERE user_name = $1');
const deleteExpired = statement('consoleSessions.deleteExpired', 'DELETE FROM console_sessions WHERE last_seen_at < $1 OR created_at < $2');

const holdUnshown = statement(
  'consoleSessions.holdUnshown',
  'INSERT INTO console_unshown_keys (key_id, integration_id, prefix, id_hash, issued_at) VALUES ($1, $2, $3, $4, $5)',
);
const shownUnshown = statement('consoleSessions.shownUnshown', 'DELETE FROM console_unshown_keys WHERE key_id = ANY($1::text[])');
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
    insert: async (s) => void (await insertSession.run(sql, s.idHash, s.userName, s.credentialId, s.createdAt, s.lastSeenAt)),
    touch: async (idHash, at) => void (await touchSession.run(sql, at, idHash)),
    delete: async (idHash) => void (await deleteSession.run(sql, idHash)),
    setFlash: async (idHash, sealed) => void (await setFlash.run(sql, sealed, idHash)),
    holdUnshown: async (k) => void (await holdUnshown.run(sql, k.keyId, k.integrationId, k.prefix, k.idHash, k.at)),
    shownUnshown: async (keyIds) => void (keyIds.length > 0 ? await shownUnshown.run(sql, [...keyIds]) : undefined),
    takeUnshownOfEndedSessions: async (limit) => (await takeEnded.rows(sql, limit)).map((r) => ({ keyId: r.key_id, integrationId: r.integration_id, prefix: r.prefix })),
    takeFlash: async (idHash) => (await takeFlash.one(sql, idHash))?.flash ?? null,
    peekFlash: async (idHash) => (await peekFlash.one(sql, idHash))?.flash ?? null,
    deleteForUser: async (userName) => (await deleteForUser.run(sql, userName)).rowCount ?? 0,
    deleteExpired: async (idleBefore, openedBefore) => (await deleteExpired.run(sql, idleBefore, openedBefore)).rowCount ?? 0,
  };
}
