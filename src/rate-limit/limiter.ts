// The gateway's own interface to a rate-limit counter, so the engine behind it can change.

/** One key's count in its current fixed window. */
export interface WindowUsage {
  /** Units used in the window so far (refused requests included). */
  used: number;
  /** When the window ends, in epoch milliseconds; a key with no count has a window ending now. */
  resetAt: number;
}

/**
 * Counts units per key in fixed windows that start at a key's first unit. Limits are compared by
 * the caller, not stored here: an integration's limit can change at a rules reload and applies at
 * once to the count it already has. Implementations: memory (one process); a shared one (several
 * replicas on one database) is the next step.
 */
export interface RateLimiter {
  /** Adds one unit to `key` and returns the count with it. */
  hit(key: string): Promise<WindowUsage>;
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
