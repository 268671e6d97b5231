// The per-integration request quota: charged at authentication, given back for free outcomes.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import type { RateLimiters, WindowUsage } from './limiter.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The unit this request took from its integration's quota (null: not a keyed request). */
    quota: QuotaCharge | null;
  }
}

interface QuotaCharge {
  integrationId: string;
  limit: number;
  /** What this replica allows of the limit now: all of it, or its share while it counts alone. */
  allowed: number;
  usage: WindowUsage;
  /** Refused with 429: nothing to give back. */
  refused: boolean;
  /** The outcome costs no quota (a replay); set by the route through `markFreeOfQuota`. */
  free: boolean;
  settled: boolean;
}

/**
 * Outcomes that give their unit back: a 409 (contract 8), and faults of the gateway itself, a 500
 * or a 503 (storage failure, shutdown, timeout), which the client did nothing to cause. A 502/504
 * of the upstream legacy API keeps its unit: the upstream did the work, and a bot that retries
 * against a failing upstream is exactly the traffic the limit must hold back.
 */
const FREE_STATUSES = new Set([409, 500, 503]);

/**
 * Free outcomes still cost the gateway work (a 409 parses, fingerprints and compares a body of up to
 * its route's limit, 160 KiB for a lead), so they have a ceiling of their own: this many times the quota a minute. Past it, the
 * integration's requests are refused until the window ends; a bot resending its backlog after an
 * outage stays far below it. Five, not more: one integration sending the largest bodies at its whole
 * allowance (10 charged and 50 free a second at the default quota) must keep to a small share of a
 * core, which ten times the quota did not (bench/results/LOG.md, "One tenant at its whole allowance of
 * worst-case bodies"). They are counted by each replica alone (`freeOutcomes`, in memory even
 * when the quota is shared): the ceiling bounds a replica's own work, and a shared quota counted per
 * request then costs one statement, not two (docs/reliability.md#shared-rate-limits).
 */
export const FREE_OUTCOMES_FACTOR = 5;

export interface IntegrationQuota {
  /** Adds the charge (onRequest, after the authentication hook) and the settlement (onSend) to a plugin. */
  register(app: FastifyInstance): void;
}

/** The request turned out to be a replay (contract 8: replays use no quota); its unit is given back. */
export function markFreeOfQuota(request: FastifyRequest): void {
  if (request.quota) request.quota.free = true;
}

/**
 * A replica that cannot reach the shared counts keeps the units the shared count held when it last
 * read it in this window (`settled`), and allows beyond them its share of what the limit left: that
 * rest divided by the live replicas it last saw, rounded down. Replicas that read the same total thus
 * never allow more than the limit together, and one replica alone never more than the limit (a rest
 * below the number of replicas gives a share of 0: refused until the database answers).
 */
export const shareOfLimit = (limit: number, usage: WindowUsage): number => {
  if (!usage.localOnly) return limit;
  const settled = usage.settled ?? 0;
  return settled + Math.floor(Math.max(limit - settled, 0) / Math.max(usage.replicas ?? 1, 1));
};

/** What a replica counting alone allows, in words: its share of the limit, or of what the shared count left of it. */
function aloneShare(limit: number, usage: WindowUsage): string {
  const settled = usage.settled ?? 0;
  return settled === 0
    ? `its share of ${limit}`
    : `${settled} counted across the replicas, then its share of the ${Math.max(limit - settled, 0)} left of ${limit}`;
}

/** Integrations over their limit that a process remembers at most; past it, those whose window ended go. */
export const OVER_LIMIT_MAX = 10_000;

/**
 * The integrations this process saw over their limit in the shared count (or the memory counter of a
 * single process), with the window end: until then their
 * requests are refused here without asking the counter (on PostgreSQL, without a statement), so a
 * key holder's refused requests cost the database nothing. A rules reload that raises the limit asks
 * the counter again; a unit given back (a replay that was in flight) forgets the entry.
 */
function overLimit() {
  const over = new Map<string, { usage: WindowUsage; limit: number }>();
  return {
    get(integrationId: string, limit: number): WindowUsage | null {
      const known = over.get(integrationId);
      if (!known) return null;
      if (known.usage.resetAt <= Date.now()) {
        over.delete(integrationId);
        return null;
      }
      return limit <= known.limit ? known.usage : null;
    },
    note(integrationId: string, usage: WindowUsage, limit: number): void {
      if (over.size >= OVER_LIMIT_MAX && !over.has(integrationId)) {
        for (const [id, k] of over) if (k.usage.resetAt <= Date.now()) over.delete(id);
        if (over.size >= OVER_LIMIT_MAX) over.delete(over.keys().next().value!);
      }
      over.set(integrationId, { usage, limit });
    },
    forget: (integrationId: string) => void over.delete(integrationId),
  };
}

const secondsUntil = (at: number) => Math.max(Math.ceil((at - Date.now()) / 1000), 0);

/** The draft RateLimit headers, under the names @fastify/rate-limit used, which clients already read. */
function rateLimitHeaders(charge: QuotaCharge): Record<string, string> {
  return {
    'ratelimit-limit': String(charge.limit),
    'ratelimit-remaining': String(Math.max(charge.allowed - charge.usage.used, 0)),
    'ratelimit-reset': String(secondsUntil(charge.usage.resetAt)),
  };
}

/**
 * The quota belongs to the integration, so its v1 and legacy keys share it. It is taken in
 * onRequest, before the body is read: a request over the limit is refused without parsing or
 * validating anything, and every request that gets further counts, whatever its status.
 */
export function createIntegrationQuota(
  limiters: Pick<RateLimiters, 'quota' | 'freeOutcomes'>,
  defaultPerMinute: number,
): IntegrationQuota {
  const { quota: limiter, freeOutcomes } = limiters;
  const over = overLimit();
  async function counted(
    integrationId: string,
    limit: number,
    overFree: boolean,
  ): Promise<{ usage: WindowUsage; allowed: number }> {
    const known = over.get(integrationId, limit);
    if (known) return { usage: known, allowed: shareOfLimit(limit, known) };
    const usage = overFree ? await limiter.peek(integrationId) : await limiter.hit(integrationId, limit);
    const allowed = shareOfLimit(limit, usage);
    // Only a shared count is remembered: a replica counting alone counts in memory anyway, and must go
    // on asking so that one request every retry period finds the database answering again.
    if (usage.used > allowed && !usage.localOnly) over.note(integrationId, usage, limit);
    return { usage, allowed };
  }
  async function charge(request: FastifyRequest): Promise<void> {
    const integration = request.integration;
    if (!integration) return;
    const limit = integration.rateLimitPerMinute ?? defaultPerMinute;
    const freeUsed = await freeOutcomes.peek(integration.id);
    const overFree = freeUsed.used >= limit * FREE_OUTCOMES_FACTOR;
    const { usage, allowed } = await counted(integration.id, limit, overFree);
    const refused = overFree || usage.used > allowed;
    request.quota = { integrationId: integration.id, limit, allowed, usage, refused, free: false, settled: false };
    if (refused) {
      const retryAfter = Math.max(secondsUntil(overFree ? freeUsed.resetAt : usage.resetAt), 1);
      const what = overFree
        ? `More than ${limit * FREE_OUTCOMES_FACTOR} replayed or conflicting requests a minute for this integration`
        : usage.localOnly
          ? `More than ${allowed} requests a minute for this integration on this replica (${aloneShare(limit, usage)} while the shared counts cannot be reached)`
          : `More than ${limit} requests a minute for this integration`;
      throw new AppError(
        'rate-limited',
        `${what}. Retry after ${retryAfter} s; this request was not read, so resend it unchanged (same event_id).`,
        {},
        {
          'retry-after': String(retryAfter),
        },
      );
    }
  }

  async function settle(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
    const charge = request.quota;
    if (!charge || charge.settled) return payload;
    charge.settled = true;
    if (!charge.refused && (charge.free || FREE_STATUSES.has(reply.statusCode))) {
      charge.usage = await limiter.giveBack(charge.integrationId, charge.usage);
      over.forget(charge.integrationId);
      await freeOutcomes.hit(charge.integrationId);
    }
    reply.headers(rateLimitHeaders(charge));
    return payload;
  }

  return {
    register(app) {
      if (!app.hasRequestDecorator('quota')) app.decorateRequest('quota', null);
      app.addHook('onRequest', charge);
      app.addHook('onSend', settle);
    },
  };
}
