// Console users: created, listed and disabled with the CLI; signed in with a password.
import type { Store } from '../store/store.js';
import type { Rules } from '../rules/catalog.js';
import type { ConsoleUser } from '../store/repos/console.js';
import { AppError } from '../errors.js';
import { newId } from '../store/ids.js';
import { checkOperatorName, refuseNameOfAnother } from '../admin/credentials.js';
import type { AdminCredential } from '../store/repos/admin-credentials.js';
import { hashKey } from '../migration/keys.js';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, DECOY_HASH, hashPassword, verifyPassword } from './password.js';

/** Who is looking: a person's name and the workspace they may see (null: the service team, every workspace). */
export interface Viewer {
  name: string;
  workspace: string | null;
}

export interface NewConsoleUser {
  name: string;
  password: string;
  /** A workspace slug for a workspace owner; null for the service team. */
  workspace: string | null;
  createdBy: string;
  sharedTokenName?: string;
}

export function checkPassword(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH)
    throw new AppError('validation-failed', `A console password has at least ${MIN_PASSWORD_LENGTH} characters.`);
  if (password.length > MAX_PASSWORD_LENGTH)
    throw new AppError('validation-failed', `A console password has at most ${MAX_PASSWORD_LENGTH} characters.`);
}

export async function createConsoleUser(store: Store, rules: Rules, input: NewConsoleUser): Promise<ConsoleUser> {
  checkOperatorName(input.name, input.sharedTokenName);
  checkPassword(input.password);
  if (input.workspace !== null && ![...rules.workspaces.values()].some((w) => w.slug === input.workspace)) {
    const known = [...rules.workspaces.values()].map((w) => w.slug).join(', ');
    throw new AppError('not-found', `No workspace "${input.workspace}" in the rules (known: ${known}).`);
  }
  const user: ConsoleUser = {
    id: newId(),
    name: input.name,
    passwordHash: await hashPassword(input.password),
    workspace: input.workspace,
    createdAt: new Date().toISOString(),
    createdBy: input.createdBy,
    disabledAt: null,
  };
  await store.transact(async (tx) => {
    await refuseNameOfAnother(tx, user.name, 'console user');
    if (await tx.consoleUsers.findByName(user.name))
      throw new AppError(
        'conflict',
        `A console user named "${user.name}" exists already (names are never reused: the audit log keeps them).`,
      );
    await tx.consoleUsers.insert(user);
  });
  return user;
}

/** Disables a user and ends their sessions at once, on every replica (the sessions live in the database). */
export async function disableConsoleUser(store: Store, name: string): Promise<{ sessionsEnded: number }> {
  return store.transact(async (tx) => {
    if ((await tx.consoleUsers.disable(name, new Date().toISOString())) === 0)
      throw new AppError('not-found', `No enabled console user named "${name}".`);
    return { sessionsEnded: await tx.consoleSessions.deleteForUser(name) };
  });
}

/**
 * The user a name and password belong to, or null. An unknown or disabled name costs the same scrypt
 * as a known one, so the time of an answer does not tell which names exist.
 */
export async function checkSignIn(store: Store, name: string, password: string): Promise<ConsoleUser | null> {
  const user =
    password.length > MAX_PASSWORD_LENGTH ? null : await store.readOne((r) => r.consoleUsers.findByName(name));
  const matches = await verifyPassword(password.slice(0, MAX_PASSWORD_LENGTH), user?.passwordHash ?? DECOY_HASH);
  return user !== null && user.disabledAt === null && matches ? user : null;
}

/**
 * The operator a personal admin token belongs to (`lead-gateway admin-token create`), or null: the
 * other way to sign in. Admin tokens are the service team's, so such a session sees every workspace.
 * The shared ADMIN_TOKEN names no person and is not taken. Found by its hash, as the admin API does.
 */
export async function checkTokenSignIn(store: Store, token: string): Promise<AdminCredential | null> {
  if (!token.startsWith('lgadm_') || token.length > 200) return null;
  const found = await store.readOne((r) => r.adminCredentials.findByHash(hashKey(token)));
  return found !== null && found.revokedAt === null ? found : null;
}
