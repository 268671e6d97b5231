// Failed authentications counted per client address: a key or token guessing loop is cut off early.
import { isIP } from 'node:net';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import type { RateLimiter, WindowUsage } from './limiter.js';

/** Where the credentials were presented; named in the warn line. */
export type AuthInterface = 'v1' | 'legacy' | 'admin' | 'console';

export interface AuthFailureGuard {
  /** 429 when this address has used up its failures: before any key is looked up. */
  refuseIfThrottled(request: FastifyRequest, iface: AuthInterface): Promise<void>;
  /** Counts a presented key or token that matched nothing; warns once when the address is cut off. */
  recordFailure(request: FastifyRequest, iface: AuthInterface): Promise<void>;
  /**
   * Counts an attempt before it is checked, for a check slow enough (a password hash) that many
   * attempts sent together would all pass `refuseIfThrottled` before the first failure is counted:
   * 429 once the address is over its budget. `succeeded` gives the unit back.
   */
  attempt(request: FastifyRequest, iface: AuthInterface): Promise<{ succeeded(): Promise<void> }>;
}

/**
 * The budget's key for a client address: an IPv4 address itself, an IPv6 address by its /64 (one
 * host or one customer's network holds a whole /64, so counting single IPv6 addresses would let a
 * guesser rotate through 2^64 of them). IPv4-mapped IPv6 addresses count as their IPv4 address.
 */
export function clientBucket(ip: string): string {
  if (!isIP(ip) || isIP(ip) === 4) return ip;
  if (/^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(ip)) return ip.slice(7);
  const [head = '', tail = ''] = ip.toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = ip.includes('::')
    ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/**
 * One budget per address for all three interfaces, so switching interface gains nothing. Only
 * credentials that were presented and did not match count (a missing header costs no lookup), and
 * nothing resets the count before its window ends: a success from the same address would let a
 * guesser holding one good key interleave it to keep guessing. `request.ip` is the socket address
 * unless TRUST_PROXY names the proxies in front, whose X-Forwarded-For then gives the client's.
 */
export function createAuthFailureGuard(limiter: RateLimiter, maxPerMinute: number): AuthFailureGuard {
  const throttled = (usage: WindowUsage) => {
    const retryAfter = Math.max(Math.ceil((usage.resetAt - Date.now()) / 1000), 1);
    return new AppError(
      'rate-limited',
      `Too many failed authentications from this address. Retry after ${retryAfter} s.`,
      {},
      { 'retry-after': String(retryAfter) },
    );
  };
  return {
    async refuseIfThrottled(request) {
      const usage = await limiter.peek(clientBucket(request.ip));
      if (usage.used >= maxPerMinute) throw throttled(usage);
    },
    async attempt(request, iface) {
      const bucket = clientBucket(request.ip);
      const usage = await limiter.hit(bucket);
      if (usage.used > maxPerMinute) {
        if (usage.used === maxPerMinute + 1)
          request.log.warn(
            {
              client_address: request.ip,
              interface: iface,
              failures: maxPerMinute,
              throttled_for_s: Math.ceil((usage.resetAt - Date.now()) / 1000),
            },
            'failed authentications from this address throttled',
          );
        throw throttled(usage);
      }
      return { succeeded: async () => void (await limiter.giveBack(bucket, usage)) };
    },
    async recordFailure(request, iface) {
      const usage = await limiter.hit(clientBucket(request.ip));
      if (usage.used === maxPerMinute) {
        request.log.warn(
          {
            client_address: request.ip,
            interface: iface,
            failures: usage.used,
            throttled_for_s: Math.ceil((usage.resetAt - Date.now()) / 1000),
          },
          'failed authentications from this address throttled',
        );
      }
    },
  };
}
