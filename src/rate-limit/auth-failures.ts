// Failed authentications counted per client address: a key or token guessing loop is cut off early.
import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import type { RateLimiter } from './limiter.js';

/** Where the credentials were presented; named in the warn line. */
export type AuthInterface = 'v1' | 'legacy' | 'admin';

export interface AuthFailureGuard {
  /** 429 when this address has used up its failures: before any key is looked up. */
  refuseIfThrottled(request: FastifyRequest, iface: AuthInterface): Promise<void>;
  /** Counts a presented key or token that matched nothing; warns once when the address is cut off. */
  recordFailure(request: FastifyRequest, iface: AuthInterface): Promise<void>;
}

/**
 * One budget per address for all three interfaces, so switching interface gains nothing. Only
 * credentials that were presented and did not match count (a missing header costs no lookup), and
 * nothing resets the count before its window ends: a success from the same address would let a
 * guesser holding one good key interleave it to keep guessing. `request.ip` is the socket address
 * (trustProxy is not set): behind a reverse proxy every client shares the proxy's budget.
 */
export function createAuthFailureGuard(limiter: RateLimiter, maxPerMinute: number): AuthFailureGuard {
  return {
    async refuseIfThrottled(request) {
      const usage = await limiter.peek(request.ip);
      if (usage.used < maxPerMinute) return;
      const retryAfter = Math.max(Math.ceil((usage.resetAt - Date.now()) / 1000), 1);
      throw new AppError(
        'rate-limited',
        `Too many failed authentications from this address. Retry after ${retryAfter} s.`,
        {},
        { 'retry-after': String(retryAfter) },
      );
    },
    async recordFailure(request, iface) {
      const usage = await limiter.hit(request.ip);
      if (usage.used === maxPerMinute) {
        request.log.warn(
          { client_address: request.ip, interface: iface, failures: usage.used, throttled_for_s: Math.ceil((usage.resetAt - Date.now()) / 1000) },
          'failed authentications from this address throttled',
        );
      }
    },
  };
}
