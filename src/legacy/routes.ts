// The deprecated bot interface (/api/bots/api/): translated writes; everything behind one gate.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { AppError, ProblemSchema } from '../errors.js';
import type { Store } from '../db/store.js';
import type { RulesHolder } from '../rules/loader.js';
import type { UsageRecorder } from '../migration/usage.js';
import { LeadObjectSchema } from '../intake/schemas.js';
import { legacyGate } from './authenticate.js';
import {
  LegacyCommentSchema,
  LegacyLeadCreateSchema,
  LegacyLeadParamsSchema,
  LegacyLeadUpdateSchema,
  LegacyMoveSchema,
  LegacyPageQuerySchema,
  LegacyPaymentSchema,
  LegacyTagCreateSchema,
  LegacyTagSchema,
} from './schemas.js';
import {
  addComment,
  addPayment,
  deleteOwnLead,
  getOwnLead,
  listBoards,
  listComments,
  listGroups,
  listOwnLeads,
  listStatuses,
  listTags,
  moveOwnLead,
} from './store-actions.js';
import { createLegacyLead, createLegacyTag, updateLegacyLead } from './service.js';

const meta = { tags: ['legacy (deprecated)'], deprecated: true, security: [{ legacyBotKey: [] }] };
const problems = { '4XX': ProblemSchema, '5XX': ProblemSchema };

const idempotencyKey = (header: string | string[] | undefined) => (typeof header === 'string' && header !== '' ? header : undefined);

export function legacyRoutes(deps: { store: Store; rules: RulesHolder; usage: UsageRecorder }) {
  return async function register(app: FastifyInstance): Promise<void> {
    const r = app.withTypeProvider<ZodTypeProvider>();
    r.addHook('onRequest', legacyGate(deps));

    r.post(
      '/api/bots/api/leads/',
      { schema: { ...meta, summary: 'Create a lead (translated into a v1 submission)', body: LegacyLeadCreateSchema, response: { 201: LeadObjectSchema, ...problems } } },
      async (request, reply) => {
        const lead = await createLegacyLead(deps, request.integration!, request.body, idempotencyKey(request.headers['idempotency-key']));
        if (lead === null) throw new AppError('not-found', 'This lead was created earlier and has since been deleted.');
        return reply.code(201).send(lead);
      },
    );

    for (const method of ['PATCH', 'PUT'] as const) {
      r.route({
        method,
        url: '/api/bots/api/leads/:id/',
        schema: { ...meta, summary: 'Add a tag or data to a lead (translated into answers)', params: LegacyLeadParamsSchema, body: LegacyLeadUpdateSchema, response: { 200: LeadObjectSchema, ...problems } },
        handler: async (request) => updateLegacyLead(deps, request.integration!, request.params.id, request.body, idempotencyKey(request.headers['idempotency-key'])),
      });
    }

    r.post(
      '/api/bots/api/tags/create/',
      { schema: { ...meta, summary: 'Create a tag (a stable id per name)', body: LegacyTagCreateSchema, response: { 201: LegacyTagSchema, ...problems } } },
      async (request, reply) => {
        const tag = await createLegacyTag(deps, request.integration!, request.body.name, request.body.color ?? null);
        return reply.code(201).send({ id: tag.id, name: tag.name, color: tag.color, is_active: true, archived_at: null });
      },
    );

    const d = { ...deps, rules: () => deps.rules.current() };
    const readMeta = (summary: string) => ({ schema: { ...meta, summary } });
    r.get('/api/bots/api/boards/', readMeta('Boards and their stages'), async (request) => listBoards(request.integration!.workspace));
    r.get('/api/bots/api/statuses/', readMeta('Statuses'), async (request) => listStatuses(d, request.integration!.workspace));
    r.get('/api/bots/api/groups/', readMeta('Groups'), async (request) => listGroups(d, request.integration!.workspace));
    r.get('/api/bots/api/tags/', readMeta('Tags'), async (request) => listTags(d, request.integration!.workspace));
    r.get('/api/bots/api/info/', readMeta('The bot\'s integration and workspace'), async (request) => {
      const i = request.integration!;
      const state = await deps.store.read((rd) => rd.states.get(i.id));
      return { integration: { id: i.id, name: i.name }, workspace: { id: i.workspace.id, name: i.workspace.name }, deprecated: true, state, sunset: i.legacy.sunset };
    });
    r.get('/api/bots/api/leads/', { schema: { ...meta, summary: 'This bot\'s leads, a page at a time', querystring: LegacyPageQuerySchema } }, async (request) =>
      listOwnLeads(d, request.integration!, request.query.page, request.query.page_size, '/api/bots/api/leads/'),
    );
    r.get('/api/bots/api/leads/:id/', { schema: { ...meta, summary: 'One of this bot\'s leads', params: LegacyLeadParamsSchema, response: { 200: LeadObjectSchema, ...problems } } }, async (request) =>
      getOwnLead(d, request.integration!, request.params.id),
    );
    r.post('/api/bots/api/leads/:id/move/', { schema: { ...meta, summary: 'Move the lead to a stage', params: LegacyLeadParamsSchema, body: LegacyMoveSchema, response: { 200: LeadObjectSchema, ...problems } } }, async (request) =>
      moveOwnLead(d, request.integration!, request.params.id, request.body.stage),
    );
    r.get('/api/bots/api/leads/:id/comments/', { schema: { ...meta, summary: 'Comments of the lead', params: LegacyLeadParamsSchema } }, async (request) =>
      listComments(d, request.integration!, request.params.id),
    );
    r.post('/api/bots/api/leads/:id/comments/', { schema: { ...meta, summary: 'Comment on the lead', params: LegacyLeadParamsSchema, body: LegacyCommentSchema } }, async (request, reply) =>
      reply.code(201).send(await addComment(d, request.integration!, request.params.id, request.body.text)),
    );
    r.post('/api/bots/api/leads/:id/payments/', { schema: { ...meta, summary: 'Record a payment', params: LegacyLeadParamsSchema, body: LegacyPaymentSchema } }, async (request, reply) =>
      reply.code(201).send(await addPayment(d, request.integration!, request.params.id, request.body.amount, request.body.comment ?? null)),
    );
    r.delete('/api/bots/api/leads/:id/', { schema: { ...meta, summary: 'Delete the lead', params: LegacyLeadParamsSchema } }, async (request, reply) => {
      await deleteOwnLead(d, request.integration!, request.params.id);
      return reply.code(204).send();
    });

    // Every other legacy path and method passes the same gate (so a switched-off key gets 403 everywhere).
    r.all('/api/bots/api/*', { schema: { hide: true } }, async (request) => {
      throw new AppError('not-found', `${request.method} ${request.url.split('?')[0]} is not served by the gateway.`);
    });
  };
}
