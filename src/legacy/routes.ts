// The deprecated bot interface (/api/bots/api/): translated writes; everything behind one gate.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { AppError, ProblemSchema } from '../errors.js';
import type { Store } from '../db/store.js';
import type { RulesHolder } from '../rules/loader.js';
import type { UsageRecorder } from '../migration/usage.js';
import { LeadObjectSchema } from '../intake/schemas.js';
import { legacyGate } from './authenticate.js';
import { LegacyLeadCreateSchema, LegacyTagCreateSchema, LegacyTagSchema } from './schemas.js';
import { createLegacyLead, createLegacyTag } from './service.js';

const meta = { tags: ['legacy (deprecated)'], deprecated: true, security: [{ legacyBotKey: [] }] };
const problems = { '4XX': ProblemSchema, '5XX': ProblemSchema };

export function legacyRoutes(deps: { store: Store; rules: RulesHolder; usage: UsageRecorder }) {
  return async function register(app: FastifyInstance): Promise<void> {
    const r = app.withTypeProvider<ZodTypeProvider>();
    r.addHook('onRequest', legacyGate(deps));

    r.post(
      '/api/bots/api/leads/',
      { schema: { ...meta, summary: 'Create a lead (translated into a v1 submission)', body: LegacyLeadCreateSchema, response: { 201: LeadObjectSchema, ...problems } } },
      async (request, reply) => {
        const key = request.headers['idempotency-key'];
        const lead = await createLegacyLead(deps, request.integration!, request.body, typeof key === 'string' && key !== '' ? key : undefined);
        if (lead === null) throw new AppError('not-found', 'This lead was created earlier and has since been deleted.');
        return reply.code(201).send(lead);
      },
    );

    r.post(
      '/api/bots/api/tags/create/',
      { schema: { ...meta, summary: 'Create a tag (a stable id per name)', body: LegacyTagCreateSchema, response: { 201: LegacyTagSchema, ...problems } } },
      async (request, reply) => {
        const tag = await createLegacyTag(deps, request.integration!, request.body.name, request.body.color ?? null);
        return reply.code(201).send({ id: tag.id, name: tag.name, color: tag.color, is_active: true, archived_at: null });
      },
    );

    // Every other legacy path and method passes the same gate (so a switched-off key gets 403 everywhere).
    r.all('/api/bots/api/*', { schema: { hide: true } }, async (request) => {
      throw new AppError('not-found', `${request.method} ${request.url.split('?')[0]} is not served by the gateway.`);
    });
  };
}
