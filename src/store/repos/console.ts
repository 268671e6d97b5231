// The console's people and their sessions: named users (a slow password hash) and the sessions every replica shares.

export interface ConsoleUser {
  id: string;
  /** The person, as the audit log names every change they make in the console. */
  name: string;
  /** `scrypt$N$r$p$salt$hash` (src/console/password.ts): the parameters travel with the hash. */
  passwordHash: string;
  /** The one workspace (its slug) the user sees; null: the service team, who see every workspace. */
  workspace: string | null;
  createdAt: string;
  createdBy: string;
  disabledAt: string | null;
}

export interface ConsoleUserRepo {
  findByName(name: string): Promise<ConsoleUser | null>;
  insert(user: ConsoleUser): Promise<void>;
  list(): Promise<ConsoleUser[]>;
  /** Disables a live user; returns 1, or 0 when there was none to disable. */
  disable(name: string, at: string): Promise<number>;
}

/** A signed-in session. Only a hash of its id is stored: a copy of the table signs nobody in. */
export interface ConsoleSession {
  idHash: string;
  userName: string;
  /** Signed in with this personal admin token (admin_credentials.id), not a password: revoking it ends the session. */
  credentialId: string | null;
  createdAt: string;
  lastSeenAt: string;
  /** A one-time value waits for the session's next page (its content is read only by peekFlash and takeFlash). */
  hasFlash?: boolean;
}

/** A key the console issued that no page has shown yet. */
export interface UnshownKey {
  keyId: string;
  integrationId: string;
  prefix: string;
}

export interface ConsoleSessionRepo {
  find(idHash: string): Promise<ConsoleSession | null>;
  /** A session just signed in. */
  insert(session: ConsoleSession): Promise<void>;
  /**
   * Moves a live session's last_seen_at. Never inserts: a request that was in flight when its session
   * was signed out must not bring the session back.
   */
  touch(idHash: string, at: string): Promise<void>;
  delete(idHash: string): Promise<void>;
  /** Keeps a one-time value (sealed by the caller: src/console/flash.ts) for the session's next page; replaces one waiting. */
  setFlash(idHash: string, sealed: string): Promise<void>;
  /** The one-time value waiting, cleared in the same unit: a second take, or a reload, finds none. */
  takeFlash(idHash: string): Promise<string | null>;
  /** The one-time value waiting, left in place: a page shows it first, and takes it once shown. */
  peekFlash(idHash: string): Promise<string | null>;
  /**
   * Notes a key the console issued for this session's next page (in the unit that issues it): while
   * the note stands, the key has not been shown. Cleared by `shownUnshown` once a page showed it.
   */
  holdUnshown(key: UnshownKey & { idHash: string; at: string }): Promise<void>;
  /** The keys a page just showed: no longer waiting. */
  shownUnshown(keyIds: readonly string[]): Promise<void>;
  /** Keys noted as not shown whose session has ended (signed out, expired, its user disabled), at most `limit`, their notes deleted. */
  takeUnshownOfEndedSessions(limit: number): Promise<UnshownKey[]>;
  /** Ends every session of a user (disabled); returns how many. */
  deleteForUser(userName: string): Promise<number>;
  /** Drops sessions idle since `idleBefore` or opened before `openedBefore`; returns how many. */
  deleteExpired(idleBefore: string, openedBefore: string): Promise<number>;
}
