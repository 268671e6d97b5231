// API keys: random (192 bits), a short readable prefix, shown once, stored only as a SHA-256 hash.
import { createHash, hash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Repos, Store } from '../store/store.js';
import { AppError } from '../errors.js';
import { hotRead, type HotRead } from '../store/hot-reads.js';
import type { ApiKey, KeyKind } from '../store/repos/keys.js';
import { newId } from '../store/ids.js';

const KEY_PREFIX: Record<KeyKind, string> = { v1: 'lgv1_', legacy: 'lgbot_', test: 'lgtest_' };
/** How much of a key is kept in clear to tell keys apart in listings and logs. */
const SHOWN_CHARS = 12;

export const hashKey = (secret: string): string => hash('sha256', secret, 'hex');

export const keyPrefix = (secret: string): string => secret.slice(0, SHOWN_CHARS);

/** Characters of an imported legacy key that must stay hidden for any of it to be shown. */
const LEGACY_HIDDEN_MIN = 20;
/** Characters shown of an imported legacy key long enough to spare them. */
const LEGACY_SHOWN_CHARS = 4;

/**
 * Legacy keys were chosen by someone else and may be short: a 6-character prefix of an 8-character
 * key leaves two characters to guess. Only a key with at least 20 characters beyond the shown ones
 * keeps a readable prefix; a shorter one is told apart by its id alone.
 */
export const legacyKeyPrefix = (secret: string): string =>
  secret.length >= LEGACY_SHOWN_CHARS + LEGACY_HIDDEN_MIN ? secret.slice(0, LEGACY_SHOWN_CHARS) : '';

export function generateKey(kind: KeyKind): string {
  return KEY_PREFIX[kind] + randomBytes(24).toString('base64url');
}

/** Constant-time equality of two secrets of any length (compares their hashes). */
export function secretsEqual(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

export interface IssuedKey {
  key: ApiKey;
  /** The secret itself: returned once, never stored. */
  secret: string;
}

/** Stores a key for an integration; `secret` defaults to a freshly generated one. */
export async function storeKey(
  tx: Repos,
  input: { integrationId: string; kind: KeyKind; createdBy: string; secret?: string; at?: string },
): Promise<IssuedKey> {
  const secret = input.secret ?? generateKey(input.kind);
  const key: ApiKey = {
    id: newId(),
    integrationId: input.integrationId,
    kind: input.kind,
    prefix: keyPrefix(secret),
    hash: hashKey(secret),
    createdAt: input.at ?? new Date().toISOString(),
    createdBy: input.createdBy,
    revokedAt: null,
  };
  if (!(await tx.keys.insert(key))) throw new AppError('conflict', 'This key is already known to the gateway.');
  return { key, secret };
}

/**
 * Finds the live key of the given kind (or of one of the given kinds). The lookup is by hash (an index probe that reveals nothing
 * about the secret's bytes), then the hashes are compared in constant time. `read` looks the key up
 * among the remembered reads (store/hot-reads.ts): one of the request's look-ups that share a check.
 */
export async function findLiveKey(
  store: Store,
  secret: string,
  kind: KeyKind | readonly KeyKind[],
  refusedHashes?: ReadonlySet<string>,
  read: HotRead = (key, load, keep) => hotRead(store, key, load, keep),
): Promise<ApiKey | null> {
  const hash = hashKey(secret);
  // Published keys (demo mode's) never open a door outside demo mode, whatever the database holds.
  if (refusedHashes?.has(hash)) return null;
  // Only keys that exist are remembered, so guessing fills nothing (store/hot-reads.ts).
  const key = await read(
    `key:${hash}`,
    () => store.readOne((r) => r.keys.findByHash(hash)),
    (k) => k !== null,
  );
  if (!key || !(typeof kind === 'string' ? key.kind === kind : kind.includes(key.kind)) || key.revokedAt !== null)
    return null;
  return timingSafeEqual(Buffer.from(key.hash, 'hex'), Buffer.from(hash, 'hex')) ? key : null;
}
