// Reads every request makes (its key, its integration's migration state; a legacy call also its
// integration's stored brownout windows), remembered a second per store.
//
// Under load each of these point reads would cost a database round trip per request. What changes
// them (key renewal, revocation, switch-off, rollback, a brownout window added or cancelled) goes
// through migration/service.ts's commitChange, which
// forgets everything of the store once its transaction has committed. A commit by another process
// (the CLI, another replica) moves the store's change generation (SQLite's data_version; the
// PostgreSQL change feed), checked on every look-up, and forgets everything too. A read that was
// under way while either happened is not remembered: it may predate the change. The one-second
// expiry is a backstop, not the mechanism.
import type { Store } from './store.js';

const HOT_READ_TTL_MS = 1000;
const MAX_ENTRIES = 4096;

interface Cache {
  entries: Map<string, { value: unknown; until: number }>;
  /** The store's change generation the entries were read under. */
  generation: number;
  /** Moves with every forgetHotReads: a change of this process. */
  forgotten: number;
}

const caches = new WeakMap<Store, Cache>();

function cacheOf(store: Store): Cache {
  let cache = caches.get(store);
  if (!cache) caches.set(store, (cache = { entries: new Map(), generation: store.changeGeneration(), forgotten: 0 }));
  return cache;
}

/** `load`'s result for `key`, from memory when read less than a second ago and `keep` allowed it. */
export type HotRead = <V>(key: string, load: () => Promise<V>, keep?: (value: V) => boolean) => Promise<V>;

/** One look-up, with its own check of the change generation. */
export function hotRead<V>(
  store: Store,
  key: string,
  load: () => Promise<V>,
  keep: (value: V) => boolean = () => true,
): Promise<V> {
  return lookUp(store, checkedCache(store), key, load, keep);
}

/**
 * Look-ups made one right after the other (a request's key, then its integration's state) that share
 * one check of the change generation, made at the first: on SQLite the check is a statement
 * (`PRAGMA data_version`), the dearest part of a remembered read. Nothing reaches the process between
 * two look-ups answered from memory; one that loads waits for the store, so the next checks again.
 */
export function hotReads(store: Store): HotRead {
  let checked: Cache | null = null;
  return <V>(key: string, load: () => Promise<V>, keep: (value: V) => boolean = () => true): Promise<V> => {
    const cache = (checked ??= checkedCache(store));
    const loadAndCheckAgain = () => {
      checked = null;
      return load();
    };
    return lookUp(store, cache, key, loadAndCheckAgain, keep);
  };
}

/** The store's remembered reads, forgotten first if another process may have changed keys or states. */
function checkedCache(store: Store): Cache {
  const cache = cacheOf(store);
  const generation = store.changeGeneration();
  if (generation !== cache.generation) {
    cache.entries.clear();
    cache.generation = generation;
  }
  return cache;
}

async function lookUp<V>(
  store: Store,
  cache: Cache,
  key: string,
  load: () => Promise<V>,
  keep: (value: V) => boolean,
): Promise<V> {
  const generation = cache.generation;
  const now = Date.now();
  const hit = cache.entries.get(key);
  if (hit && hit.until > now) return hit.value as V;
  const forgotten = cache.forgotten;
  const value = await load();
  const unchanged = forgotten === cache.forgotten && store.changeGeneration() === generation;
  if (keep(value) && unchanged) {
    if (cache.entries.size >= MAX_ENTRIES) cache.entries.clear();
    cache.entries.set(key, { value, until: now + HOT_READ_TTL_MS });
  } else {
    cache.entries.delete(key);
  }
  return value;
}

/** Forgets everything remembered for a store; call it after a commit that changed keys or states. */
export function forgetHotReads(store: Store): void {
  const cache = caches.get(store);
  if (!cache) return;
  cache.entries.clear();
  cache.forgotten++;
}
