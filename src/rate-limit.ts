// Rate limiting per integration key (@fastify/rate-limit); replays and 409s use no quota (contract 8).
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Store } from './db/store.js';
import { AppError } from './errors.js';
import type { Endpoint, Submission } from './idempotency/submission-store.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The ledger row of this request's event_id as the limiter found it (undefined: not looked up). */
    knownEvent: Submission | null | undefined;
  }
}

const V1_ENDPOINTS: Record<string, Endpoint> = {
  '/api/integrations/v1/leads/': 'leads',
  '/api/integrations/v1/leads/answers/': 'answers',
};

/** A v1 request whose event_id is already recorded is a replay or a 409: neither costs quota. */
async function isKnownEvent(store: Store, request: FastifyRequest): Promise<boolean> {
  const endpoint = V1_ENDPOINTS[request.routeOptions.url ?? ''];
  const eventId = (request.body as { event_id?: unknown } | undefined)?.event_id;
  if (endpoint === undefined || typeof eventId !== 'string' || !request.integration) return false;
  request.knownEvent = await store.peek((r) => r.submissions.find(request.integration!.id, endpoint, eventId));
  return request.knownEvent !== null;
}

/**
 * Registered inside the v1 and legacy plugins only, so admin, health and metrics are never limited.
 * It runs as a preHandler: after authentication (the key is known) and validation (event_id is).
 */
export async function registerRateLimit(app: FastifyInstance, deps: { store: Store; defaultPerMinute: number }): Promise<void> {
  if (!app.hasRequestDecorator('knownEvent')) app.decorateRequest('knownEvent', undefined);
  await app.register(rateLimit, {
    hook: 'preHandler',
    timeWindow: 60_000,
    max: async (request) => request.integration?.rateLimitPerMinute ?? deps.defaultPerMinute,
    keyGenerator: (request) => request.apiKeyId ?? request.ip,
    allowList: (request) => isKnownEvent(deps.store, request),
    enableDraftSpec: true,
    errorResponseBuilder: (_request, context) =>
      new AppError(
        'rate-limited',
        `More than ${context.max} requests a minute with this key. Retry after ${Math.ceil(context.ttl / 1000)} s with the same event_id.`,
        {},
        { 'retry-after': String(Math.ceil(context.ttl / 1000)) },
      ),
  });
}
