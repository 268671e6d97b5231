// Who is calling the admin API: a named operator's personal token, or the shared ADMIN_TOKEN.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Repos, Store } from '../store/store.js';
import { AppError } from '../errors.js';
import { newId } from '../store/ids.js';
import { hashKey, keyPrefix, secretsEqual } from '../migration/keys.js';
import type { AdminCredential } from '../store/repos/admin-credentials.js';

/** The audit name of the shared ADMIN_TOKEN when the configuration gives none. */
export const DEFAULT_SHARED_TOKEN_NAME = 'automation';

/** An operator's name: what the audit log shows for every change they make. */
export const ADMIN_NAME = /^[a-z0-9][a-z0-9._@-]{0,63}$/;

export interface IssuedCredential {
  credential: AdminCredential;
  /** Shown once, never stored. */
  token: string;
}

/** Names the audit log gives to the gateway itself: start-up's revocations and demo mode's keys. */
const SYSTEM_ACTORS = ['startup', 'demo-mode'];

/** Refuses a name that is malformed or that the audit log already gives to someone else (admin tokens, console users). */
export function checkOperatorName(name: string, sharedTokenName = DEFAULT_SHARED_TOKEN_NAME): void {
  if (!ADMIN_NAME.test(name))
    throw new AppError('validation-failed', 'A name is 1-64 of a-z 0-9 . _ @ -, starting with a letter or digit.');
  if ([DEFAULT_SHARED_TOKEN_NAME, sharedTokenName, ...SYSTEM_ACTORS].includes(name)) {
    throw new AppError(
      'conflict',
      `"${name}" already names ${SYSTEM_ACTORS.includes(name) ? 'the gateway itself' : 'the shared ADMIN_TOKEN'} in the audit log; choose another name.`,
    );
  }
}

/**
 * Console users and admin tokens share one namespace: the audit log names both by their name alone, so
 * a name one kind has (a disabled user, a revoked token: their entries stay) is refused to the other.
 * Called inside the unit that takes the name, after `locks.operatorNames()`: two units creating one
 * name as both kinds run one after the other, and the second is refused (PostgreSQL; SQLite's units
 * run one at a time anyway).
 */
export async function refuseNameOfAnother(
  tx: Repos,
  name: string,
  taking: 'console user' | 'admin token',
): Promise<void> {
  await tx.locks.operatorNames();
  const other =
    taking === 'admin token'
      ? (await tx.consoleUsers.findByName(name)) !== null && 'a console user'
      : (await tx.adminCredentials.list()).some((c) => c.name === name) && 'an admin token (live or revoked)';
  if (other)
    throw new AppError(
      'conflict',
      `"${name}" already names ${other} in the audit log; one name is one person: choose another name (a person with an admin token signs in to the console with it).`,
    );
}

/** A name both a console user and an admin token have, or the shared token's: made before the rule above, or written around it. */
export interface NameCollision {
  name: string;
  /** What has it: 'console user', 'admin token', 'shared ADMIN_TOKEN', 'the gateway itself'. */
  holders: string[];
}

/** Every name the audit log gives to more than one principal, sorted by name: what `lead-gateway users check-names` reports. */
export async function nameCollisions(
  store: Store,
  sharedTokenName = DEFAULT_SHARED_TOKEN_NAME,
): Promise<NameCollision[]> {
  const { users, credentials } = await store.snapshot(async (r) => ({
    users: await r.consoleUsers.list(),
    credentials: await r.adminCredentials.list(),
  }));
  const holders = new Map<string, Set<string>>();
  const add = (name: string, holder: string) => holders.set(name, (holders.get(name) ?? new Set()).add(holder));
  for (const name of new Set([DEFAULT_SHARED_TOKEN_NAME, sharedTokenName])) add(name, 'shared ADMIN_TOKEN');
  for (const name of SYSTEM_ACTORS) add(name, 'the gateway itself');
  for (const u of users) add(u.name, 'console user');
  for (const c of credentials) add(c.name, 'admin token');
  return [...holders]
    .filter(([, h]) => h.size > 1)
    .map(([name, h]) => ({ name, holders: [...h] }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * Issues a personal admin token for `name` (192 random bits, stored as a hash). A name the audit log
 * already uses for someone else (the shared token's, the gateway's own, a console user's) is refused,
 * so an entry's actor always means one thing.
 */
export async function createAdminCredential(
  store: Store,
  name: string,
  createdBy: string,
  sharedTokenName = DEFAULT_SHARED_TOKEN_NAME,
): Promise<IssuedCredential> {
  checkOperatorName(name, sharedTokenName);
  const token = `lgadm_${randomBytes(24).toString('base64url')}`;
  const credential: AdminCredential = {
    id: newId(),
    name,
    prefix: keyPrefix(token),
    hash: hashKey(token),
    createdAt: new Date().toISOString(),
    createdBy,
    revokedAt: null,
  };
  await store.transact(async (tx) => {
    await refuseNameOfAnother(tx, name, 'admin token');
    await tx.adminCredentials.insert(credential);
  });
  return { credential, token };
}

export async function revokeAdminCredentials(store: Store, name: string): Promise<number> {
  const revoked = await store.transact((tx) => tx.adminCredentials.revokeByName(name, new Date().toISOString()));
  if (revoked === 0) throw new AppError('not-found', `No live admin credential named "${name}".`);
  return revoked;
}

/**
 * The operator a bearer token belongs to, or null. The shared token is compared in constant time; a
 * personal one is found by its hash (an index probe that reveals nothing of the token's bytes).
 */
export async function adminIdentity(
  store: Store,
  token: string,
  shared: { token: string; name: string },
): Promise<string | null> {
  if (secretsEqual(token, shared.token)) return shared.name;
  const hash = hashKey(token);
  const found = await store.readOne((r) => r.adminCredentials.findByHash(hash));
  if (!found || found.revokedAt !== null) return null;
  return timingSafeEqual(Buffer.from(found.hash, 'hex'), Buffer.from(hash, 'hex')) ? found.name : null;
}
