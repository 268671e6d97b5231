// The deprecated bot interface (/api/bots/api/): translated writes; everything behind one gate.
import type { FastifyInstance, HTTPMethods } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { AppError } from '../errors.js';
import type { Store } from '../store/store.js';
import type { RulesHolder } from '../rules/loader.js';
import type { UsageRecorder } from '../migration/usage.js';
import { LeadObjectSchema } from '../lead/schemas.js';
import { legacyGate } from './gate.js';
import { redactLegacyCall, redactionRules } from '../porting/redact.js';
import {
  LEGACY_CREATE_BODY_LIMIT_BYTES,
  LEGACY_UPDATE_BODY_LIMIT_BYTES,
  LEGACY_SMALL_WRITE_BODY_LIMIT_BYTES,
  LEGACY_WRITE_COUNTED,
  LEGACY_WRITE_MAX_VALUES,
  legacyMeta,
  LegacyLeadCreateSchema,
  LegacyLeadParamsSchema,
  LegacyLeadUpdateSchema,
  LegacyTagCreateSchema,
  LegacyTagSchema,
} from './schemas.js';
import { localRoutes } from './local-routes.js';
import { registerUpstream } from './pass-through.js';
import { markFreeOfQuota, type IntegrationQuota } from '../rate-limit/quota.js';
import type { AuthFailureGuard } from '../rate-limit/auth-failures.js';
import { inexactKeysUnder } from '../http/json-body.js';
import type { UpstreamConfig } from '../config.js';
import type { Metrics } from '../http/metrics.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route sends the request on to the upstream legacy API. */
    forwarded?: boolean;
    /** The route is the gateway's own read, not a legacy call: no usage record, no sample, no quiet-period reset. */
    uncounted?: boolean;
  }
}
import { createLegacyLead, createLegacyTag, updateLegacyLead } from './service.js';
import { portingGuide } from '../porting/service.js';
import { PortingGuideQuerySchema, PortingGuideSchema } from '../porting/guide.js';
import { guideMarkdown, wantsMarkdown } from '../porting/markdown.js';
import { z } from 'zod';

const meta = legacyMeta;

const idempotencyKey = (header: string | string[] | undefined) =>
  typeof header === 'string' && header !== '' ? header : undefined;

/** Legacy requests without a v1 translation: served locally, or forwarded when an upstream is set. */
export const FORWARDED: [HTTPMethods, string][] = [
  ['GET', '/api/bots/api/boards/'],
  ['GET', '/api/bots/api/statuses/'],
  ['GET', '/api/bots/api/groups/'],
  ['GET', '/api/bots/api/tags/'],
  ['GET', '/api/bots/api/info/'],
  ['GET', '/api/bots/api/leads/'],
  ['GET', '/api/bots/api/leads/:id/'],
  ['GET', '/api/bots/api/leads/:id/comments/'],
  ['POST', '/api/bots/api/leads/:id/comments/'],
  ['POST', '/api/bots/api/leads/:id/move/'],
  ['POST', '/api/bots/api/leads/:id/payments/'],
  ['DELETE', '/api/bots/api/leads/:id/'],
];

export function legacyRoutes(deps: {
  store: Store;
  rules: RulesHolder;
  usage: UsageRecorder;
  metrics: Metrics;
  upstream: UpstreamConfig | null;
  quota: IntegrationQuota;
  authFailures: AuthFailureGuard;
  refusedKeyHashes: ReadonlySet<string>;
}) {
  return async function register(app: FastifyInstance): Promise<void> {
    const r = app.withTypeProvider<ZodTypeProvider>();
    app.decorateRequest('brownout', null);
    r.addHook('onRequest', legacyGate(deps));
    // Every call with a known key counts for the report, the 403 of a switched-off bot included (that
    // is what the report must show); the 2xx apart.
    r.addHook('onResponse', async (request, reply) => {
      if (request.integration && request.routeOptions.config.uncounted !== true) {
        const route = `${request.method} ${request.routeOptions.url ?? request.url.split('?')[0]}`;
        deps.usage.record(request.integration.id, 'legacy', route, reply.statusCode < 300, undefined, request.apiKeyId);
        if (request.brownout) deps.usage.recordBrownout(request.integration.id, request.brownout.start, route);
        // One answered call per route kept for the porting guide, redacted here, written with the counts.
        if (reply.statusCode < 300 && deps.usage.wantsSample(request.integration.id, route)) {
          const call = {
            method: request.method,
            routeUrl: request.routeOptions.url ?? '',
            query: request.query as Record<string, unknown> | null,
            body: request.body,
            status: reply.statusCode,
          };
          const sample = redactLegacyCall(call, redactionRules(request.integration));
          deps.usage.recordSample({
            integrationId: request.integration.id,
            route,
            at: new Date().toISOString(),
            sample: { ...sample },
          });
        }
      }
    });
    // After the gate (a switched-off key's 403 costs nothing) and before the body is read.
    deps.quota.register(app);

    r.post(
      '/api/bots/api/leads/',
      {
        // Refused by size, then by its values, tag ids and extra_data counted on the raw text (json-body.ts).
        bodyLimit: LEGACY_CREATE_BODY_LIMIT_BYTES,
        config: { jsonLimits: { maxValues: LEGACY_WRITE_MAX_VALUES, counted: LEGACY_WRITE_COUNTED } },
        schema: {
          ...meta,
          summary: 'Create a lead (translated into a v1 submission)',
          body: LegacyLeadCreateSchema,
          response: { 201: LeadObjectSchema },
          problems: ['not-found', 'event-id-conflict'],
        },
      },
      async (request, reply) => {
        const { lead, replayed } = await createLegacyLead(
          deps,
          request.integration!,
          request.body,
          idempotencyKey(request.headers['idempotency-key']),
          inexactKeysUnder(request, '/extra_data'),
        );
        if (replayed) markFreeOfQuota(request);
        if (lead === null) throw new AppError('not-found', 'This lead was created earlier and has since been deleted.');
        return reply.code(201).send(lead);
      },
    );

    for (const method of ['PATCH', 'PUT'] as const) {
      r.route({
        method,
        url: '/api/bots/api/leads/:id/',
        bodyLimit: LEGACY_UPDATE_BODY_LIMIT_BYTES,
        config: { jsonLimits: { maxValues: LEGACY_WRITE_MAX_VALUES, counted: LEGACY_WRITE_COUNTED } },
        schema: {
          ...meta,
          summary: 'Add a tag or data to a lead (translated into answers)',
          params: LegacyLeadParamsSchema,
          body: LegacyLeadUpdateSchema,
          response: { 200: LeadObjectSchema },
          problems: ['not-found', 'event-id-conflict'],
        },
        handler: async (request) => {
          const { lead, replayed } = await updateLegacyLead(
            deps,
            request.integration!,
            request.params.id,
            request.body,
            idempotencyKey(request.headers['idempotency-key']),
            inexactKeysUnder(request, '/extra_data'),
          );
          if (replayed) markFreeOfQuota(request);
          return lead;
        },
      });
    }

    r.post(
      '/api/bots/api/tags/create/',
      {
        bodyLimit: LEGACY_SMALL_WRITE_BODY_LIMIT_BYTES,
        schema: {
          ...meta,
          summary: 'Create a tag (a stable id per name)',
          body: LegacyTagCreateSchema,
          response: { 201: LegacyTagSchema },
          problems: ['limit-reached'],
        },
      },
      async (request, reply) => {
        const tag = await createLegacyTag(deps, request.integration!, request.body.name, request.body.color ?? null);
        return reply
          .code(201)
          .send({ id: tag.id, name: tag.name, color: tag.color, is_active: true, archived_at: null });
      },
    );

    // The bot author's own porting guide, read with the legacy key: an addition of the gateway's, served
    // here even with an upstream set (a route beats the forwarded wildcard), not counted as a legacy
    // call (docs/legacy-api.md, "The porting guide").
    r.get(
      '/api/bots/api/porting-guide/',
      {
        config: { uncounted: true },
        schema: {
          ...meta,
          summary:
            "This bot's porting guide (the gateway's own read, not a legacy call): JSON, or Markdown for format=markdown or Accept: text/markdown",
          querystring: PortingGuideQuerySchema,
          response: {
            200: {
              description: 'The guide as JSON, or as Markdown text',
              content: { 'application/json': { schema: PortingGuideSchema }, 'text/markdown': { schema: z.string() } },
            },
          },
        },
      },
      async (request, reply) => {
        const guide = await portingGuide(deps, request.integration!);
        if (wantsMarkdown(request.query.format, request.headers.accept))
          return reply.header('vary', 'Accept').type('text/markdown; charset=utf-8').send(guideMarkdown(guide));
        return reply.header('vary', 'Accept').send(guide);
      },
    );

    if (deps.upstream) {
      const forward = registerUpstream(app, deps.upstream);
      app.addHook('onResponse', async (request, reply) => {
        if (request.routeOptions.config.forwarded !== true) return;
        const failure = reply.logContext?.upstream_error;
        if (typeof failure === 'string') deps.metrics.upstreamErrors.inc({ kind: failure });
        else deps.metrics.upstreamDuration.observe({ status: String(reply.statusCode) }, reply.elapsedTime / 1000);
      });
      for (const [method, url] of FORWARDED) {
        r.route({
          method,
          url,
          config: { forwarded: true },
          schema: { ...meta, summary: `Forwarded to the upstream legacy API` },
          handler: forward,
        });
      }
      // The prefix itself too (with or without its slash): every legacy path passes the gate (docs/legacy-api.md, "Every call").
      for (const url of ['/api/bots/api', '/api/bots/api/*'])
        r.all(url, { config: { forwarded: true }, schema: { hide: true } }, forward);
      return;
    }
    await app.register(localRoutes({ ...deps, rules: () => deps.rules.current() }));

    // Every other legacy path and method passes the same gate (so a switched-off key gets 403 everywhere).
    // The prefix itself too (with or without its slash), so a switched-off key gets 403 there as well.
    for (const url of ['/api/bots/api', '/api/bots/api/*']) {
      r.all(url, { schema: { hide: true } }, async (request) => {
        throw new AppError('not-found', `${request.method} ${request.url.split('?')[0]} is not served by the gateway.`);
      });
    }
  };
}
