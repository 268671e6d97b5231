// API keys: random (192 bits), a short readable prefix, shown once, stored only as a SHA-256 hash.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Repos, Store } from '../db/store.js';
import type { ApiKey, KeyKind } from './key-store.js';
import { newId } from '../db/ids.js';

const KEY_PREFIX: Record<KeyKind, string> = { v1: 'lgv1_', legacy: 'lgbot_' };
/** How much of a key is kept in clear to tell keys apart in listings and logs. */
const SHOWN_CHARS = 12;

export const hashKey = (secret: string): string => createHash('sha256').update(secret, 'utf8').digest('hex');

export const keyPrefix = (secret: string): string => secret.slice(0, SHOWN_CHARS);

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
  await tx.keys.insert(key);
  return { key, secret };
}

/**
 * Finds the live key of the given kind. The lookup is by hash (an index probe that reveals nothing
 * about the secret's bytes), then the hashes are compared in constant time.
 */
export async function findLiveKey(store: Store, secret: string, kind: KeyKind): Promise<ApiKey | null> {
  const hash = hashKey(secret);
  const key = await cachedKey(store, hash);
  if (!key || key.kind !== kind || key.revokedAt !== null) return null;
  return timingSafeEqual(Buffer.from(key.hash, 'hex'), Buffer.from(hash, 'hex')) ? key : null;
}

/**
 * Keys found are remembered for a second per store: every request authenticates, and the point read
 * on the reader connection (whose page cache every commit empties) cost more than the rest of the
 * check. Renewal in this process forgets them at once; a renewal by another process (the CLI) takes
 * effect within KEY_CACHE_TTL_MS. Unknown keys are never remembered, so guessing fills nothing.
 */
export const KEY_CACHE_TTL_MS = 1000;
const KEY_CACHE_MAX = 1024;
const keyCaches = new WeakMap<Store, Map<string, { key: ApiKey; until: number }>>();

async function cachedKey(store: Store, hash: string): Promise<ApiKey | null> {
  let cache = keyCaches.get(store);
  if (!cache) keyCaches.set(store, (cache = new Map()));
  const now = Date.now();
  const hit = cache.get(hash);
  if (hit && hit.until > now) return hit.key;
  const key = await store.read((r) => r.keys.findByHash(hash));
  if (key) {
    if (cache.size >= KEY_CACHE_MAX) cache.clear();
    cache.set(hash, { key, until: now + KEY_CACHE_TTL_MS });
  } else {
    cache.delete(hash);
  }
  return key;
}

/** Forgets every remembered key of a store (after a renewal revoked some). */
export function forgetKeys(store: Store): void {
  keyCaches.get(store)?.clear();
}
