// Rows of the console's tables as both engines return them, and their mapping to records.
import type { ConsoleSession, ConsoleUser } from './repos/console.js';

export interface ConsoleUserRow {
  id: string;
  name: string;
  password_hash: string;
  workspace_slug: string | null;
  created_at: string;
  created_by: string;
  disabled_at: string | null;
}

export const rowToConsoleUser = (r: ConsoleUserRow): ConsoleUser => ({
  id: r.id,
  name: r.name,
  passwordHash: r.password_hash,
  workspace: r.workspace_slug,
  createdAt: r.created_at,
  createdBy: r.created_by,
  disabledAt: r.disabled_at,
});

export interface ConsoleSessionRow {
  id_hash: string;
  user_name: string;
  credential_id: string | null;
  created_at: string;
  last_seen_at: string;
  /** Added by SQLite migration 17 / PostgreSQL migration 12. */
  flash: string | null;
}

export const rowToConsoleSession = (r: ConsoleSessionRow): ConsoleSession => ({
  idHash: r.id_hash,
  userName: r.user_name,
  credentialId: r.credential_id,
  createdAt: r.created_at,
  lastSeenAt: r.last_seen_at,
  hasFlash: r.flash !== null,
});
