// The process-local RateLimiter, on rate-limiter-flexible's memory store.
import { RateLimiterMemory, type RateLimiterRes } from 'rate-limiter-flexible';
import { WINDOW_MS, type RateLimiter, type RateLimiters, type WindowUsage } from './limiter.js';

/** A library answer as a window's usage: a record whose window has ended may linger until its timer fires, and counts as none. */
export const usageOf = (res: RateLimiterRes | null): WindowUsage =>
  res === null || res.msBeforeNext <= 0
    ? { used: 0, resetAt: Date.now() }
    : { used: res.consumedPoints, resetAt: Date.now() + res.msBeforeNext };

/**
 * rate-limiter-flexible keeps a fixed window per key that starts at its first point, with atomic
 * penalty and reward; its PostgreSQL store gives the same calls across replicas (shared-limiter.ts).
 * Its own `points` check is not used: `penalty` counts without refusing, and the caller compares the
 * count with the integration's current limit.
 */
export function createMemoryLimiter(name: string, windowMs = WINDOW_MS): RateLimiter {
  const counter = new RateLimiterMemory({
    keyPrefix: name,
    points: Number.MAX_SAFE_INTEGER,
    duration: windowMs / 1000,
  });
  return {
    hit: async (key) => usageOf(await counter.penalty(key, 1)),
    async giveBack(key, hit) {
      // After the window ended, a reward would open a new window at -1: one request more than allowed.
      if (Date.now() >= hit.resetAt) return usageOf(await counter.get(key));
      return usageOf(await counter.reward(key, 1));
    },
    peek: async (key) => usageOf(await counter.get(key)),
  };
}

/** The counters of a single process (SQLite, or a test): nothing to release. */
export function createMemoryLimiters(): RateLimiters {
  return {
    quota: createMemoryLimiter('quota'),
    freeOutcomes: createMemoryLimiter('free-outcomes'),
    authFailures: createMemoryLimiter('auth-failures'),
    close: async () => {},
  };
}
