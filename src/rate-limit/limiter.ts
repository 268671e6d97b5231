// The gateway's own interface to a rate-limit counter, so the engine behind it can change.

/** One key's count in its current fixed window. */
export interface WindowUsage {
  /** Units used in the window so far (refused requests included). */
  used: number;
  /** When the window ends, in epoch milliseconds; a key with no count has a window ending now. */
  resetAt: number;
  /**
   * Set by the shared limiter when its database did not answer and the unit was counted by this
   * process alone: `giveBack` returns it to the same counter.
   */
  localOnly?: boolean;
  /**
   * Set with `localOnly`: the live replicas this process last saw on the database. A replica counting
   * alone allows only its share of what the limit left (quota.ts), so the replicas together never allow more.
   */
  replicas?: number;
  /**
   * Set with `localOnly`: the units of `used` that the shared count held when this process last read
   * it for the key in this window. They stay counted; the replica's share is of what the limit left.
   */
  settled?: number;
}

/**
 * Counts units per key in fixed windows that start at a key's first unit. Limits are compared by
 * the caller, not stored here: an integration's limit can change at a rules reload and applies at
 * once to the count it already has. Implementations: memory (one process, memory-limiter.ts) and
 * shared through PostgreSQL (several replicas on one database, shared-limiter.ts; the quota counted in
 * memory and settled in batches, settled-quota.ts).
 */
export interface RateLimiter {
  /**
   * Adds one unit to `key` and returns the count with it. `limit` is the one the caller compares the
   * count with: a counter that decides from an estimate (settled-quota.ts) bounds by it how far it may
   * run ahead of the shared count; the others ignore it.
   */
  hit(key: string, limit?: number): Promise<WindowUsage>;
  /**
   * Takes back the unit that `hit` returned, when the request turned out to be free. A window that
   * has ended in between is left alone: the unit was counted in a window that no longer exists.
   */
  giveBack(key: string, hit: WindowUsage): Promise<WindowUsage>;
  /** The count now, unchanged. */
  peek(key: string): Promise<WindowUsage>;
}

/** Requests and failures are counted per minute (the limits are configured "per minute"). */
export const WINDOW_MS = 60_000;

/** The gateway's counters: requests per integration, its free outcomes, failed authentications per client address. */
export interface RateLimiters {
  quota: RateLimiter;
  /** Replays and conflicts per integration (quota.ts's ceiling): always this process's own count. */
  freeOutcomes: RateLimiter;
  authFailures: RateLimiter;
  /** Releases what the counters hold (a database pool); the counts of a memory limiter are simply dropped. */
  close(): Promise<void>;
}
