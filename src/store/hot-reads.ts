// Reads every request makes (its key, its integration's migration state), remembered a second per store.
//
// The reader connection's page cache is emptied by every commit, so under load each of these point
// reads was a cold one. What changes them (key renewal, switch-off, rollback) goes through
// migration/service.ts, which forgets everything of the store once its transaction has committed;
// a commit by another process (the CLI) is seen through SQLite's data_version, checked on every
// look-up, and forgets everything too. The one-second expiry is a backstop, not the mechanism.
import type { Store } from './store.js';

const HOT_READ_TTL_MS = 1000;
const MAX_ENTRIES = 4096;
const caches = new WeakMap<Store, Map<string, { value: unknown; until: number }>>();

/** `load`'s result for `key`, from memory when read less than a second ago and `keep` allowed it. */
export async function hotRead<V>(store: Store, key: string, load: () => Promise<V>, keep: (value: V) => boolean = () => true): Promise<V> {
  let cache = caches.get(store);
  if (!cache) caches.set(store, (cache = new Map()));
  if (store.changedElsewhere()) cache.clear();
  const now = Date.now();
  const hit = cache.get(key);
  if (hit && hit.until > now) return hit.value as V;
  const value = await load();
  if (keep(value)) {
    if (cache.size >= MAX_ENTRIES) cache.clear();
    cache.set(key, { value, until: now + HOT_READ_TTL_MS });
  } else {
    cache.delete(key);
  }
  return value;
}

/** Forgets everything remembered for a store; call it after a commit that changed keys or states. */
export function forgetHotReads(store: Store): void {
  caches.get(store)?.clear();
}
