// The console's sessions in the gateway's database, for @fastify/session: every replica sees the same
// sessions, and signing out ends one everywhere at once (a stateless cookie could not be taken back).
import { createHash } from 'node:crypto';
import type { Session } from 'fastify';
import type { SessionStore } from '@fastify/session';
import type { Store } from '../store/store.js';

/** A session unused this long is over: the next request signs in again. */
export const SESSION_IDLE_MS = 30 * 60_000;
/** A session is over this long after sign-in, however busy. */
export const SESSION_MAX_MS = 12 * 3_600_000;
/** last_seen_at is written at most this often per session: one write a minute, not one per page. */
const TOUCH_EVERY_MS = 60_000;

/** What a console session holds: the signed-in person, the workspace they may see, when it was last written. */
export interface ConsoleSessionData {
  user?: string;
  workspace?: string | null;
  /** The personal admin token signed in with (its id), when not a password. */
  credential?: string | null;
  seenAt?: number;
  /** A one-time value (flash.ts) waits in the row for the next page that takes it. */
  hasFlash?: boolean;
}

/** Only a hash of the session id is stored: a leaked copy of the table signs nobody in. */
export const idHash = (sessionId: string) => createHash('sha256').update(sessionId).digest('hex');

export function consoleSessionStore(store: Store, now: () => number = Date.now) {
  const expired = (createdAt: string, lastSeenAt: string) =>
    Date.parse(lastSeenAt) < now() - SESSION_IDLE_MS || Date.parse(createdAt) < now() - SESSION_MAX_MS;

  async function get(sessionId: string): Promise<ConsoleSessionData | null> {
    const hash = idHash(sessionId);
    // Two statements: a readCommitted (a readOne must be one statement: on SQLite it may run on the writer).
    const found = await store.readCommitted(async (r) => {
      const session = await r.consoleSessions.find(hash);
      if (session === null) return null;
      // Who the session belongs to, as of now: a disabled user or a revoked token signs nobody in.
      if (session.credentialId !== null) {
        const credential = await r.adminCredentials.findById(session.credentialId);
        const live = credential !== null && credential.revokedAt === null && credential.name === session.userName;
        return {
          session,
          viewer: live ? { user: session.userName, workspace: null, credential: session.credentialId } : null,
        };
      }
      const user = await r.consoleUsers.findByName(session.userName);
      return {
        session,
        viewer:
          user !== null && user.disabledAt === null
            ? { user: user.name, workspace: user.workspace, credential: null }
            : null,
      };
    });
    if (found === null) return null;
    if (expired(found.session.createdAt, found.session.lastSeenAt) || found.viewer === null) {
      await store.transact((tx) => tx.consoleSessions.delete(hash));
      return null;
    }
    return { ...found.viewer, seenAt: Date.parse(found.session.lastSeenAt), hasFlash: found.session.hasFlash === true };
  }

  async function set(sessionId: string, data: ConsoleSessionData): Promise<void> {
    if (!data.user) return;
    const at = new Date(now()).toISOString();
    // No seenAt: the session was made by this request (sign-in). Otherwise it was read from the table,
    // and is only touched: one signed out meanwhile stays signed out.
    if (data.seenAt === undefined) {
      await store.transact((tx) =>
        tx.consoleSessions.insert({
          idHash: idHash(sessionId),
          userName: data.user!,
          credentialId: data.credential ?? null,
          createdAt: at,
          lastSeenAt: at,
        }),
      );
    } else if (now() - data.seenAt >= TOUCH_EVERY_MS) {
      await store.transact((tx) => tx.consoleSessions.touch(idHash(sessionId), at));
    }
  }

  const callbacks: SessionStore = {
    // @fastify/session restores the cookie from its own options when the stored data has none.
    get: (sessionId, callback) => void get(sessionId).then((data) => callback(null, data as Session | null), callback),
    set: (sessionId, data, callback) => void set(sessionId, data).then(() => callback(), callback),
    destroy: (sessionId, callback) =>
      void store.transact((tx) => tx.consoleSessions.delete(idHash(sessionId))).then(() => callback(), callback),
  };
  return {
    ...callbacks,
    /** Drops the rows of sessions that are over (run at each sign-in: the table stays the size of the live sessions). */
    sweep: () => {
      const t = now();
      return store.transact((tx) =>
        tx.consoleSessions.deleteExpired(
          new Date(t - SESSION_IDLE_MS).toISOString(),
          new Date(t - SESSION_MAX_MS).toISOString(),
        ),
      );
    },
  };
}
