// The process-local RateLimiter, on rate-limiter-flexible's memory store.
import { RateLimiterMemory, type RateLimiterRes } from 'rate-limiter-flexible';
import { WINDOW_MS, type RateLimiter, type WindowUsage } from './limiter.js';

/**
 * rate-limiter-flexible keeps a fixed window per key that starts at its first point, with atomic
 * penalty and reward; its PostgreSQL and Redis stores (and an insurance limiter for when those
 * fail) give the same calls across replicas. Its own `points` check is not used: `penalty` counts
 * without refusing, and the caller compares the count with the integration's current limit.
 */
export function createMemoryLimiter(name: string, windowMs = WINDOW_MS): RateLimiter {
  const counter = new RateLimiterMemory({ keyPrefix: name, points: Number.MAX_SAFE_INTEGER, duration: windowMs / 1000 });
  // A record whose window has ended may linger until its timer fires: it counts as none.
  const usage = (res: RateLimiterRes | null): WindowUsage =>
    res === null || res.msBeforeNext <= 0 ? { used: 0, resetAt: Date.now() } : { used: res.consumedPoints, resetAt: Date.now() + res.msBeforeNext };
  return {
    hit: async (key) => usage(await counter.penalty(key, 1)),
    async giveBack(key, hit) {
      // After the window ended, a reward would open a new window at -1: one request more than allowed.
      if (Date.now() >= hit.resetAt) return usage(await counter.get(key));
      return usage(await counter.reward(key, 1));
    },
    peek: async (key) => usage(await counter.get(key)),
  };
}
