// Legacy reads and actions served from the gateway's own store (no upstream configured).
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { LeadObjectSchema } from '../lead/schemas.js';
import { z } from 'zod';
import {
  LegacyBoardSchema,
  LegacyCommentListSchema,
  LegacyCommentObjectSchema,
  LegacyCommentSchema,
  LegacyGroupSchema,
  LegacyInfoSchema,
  LegacyLeadPageSchema,
  LegacyLeadParamsSchema,
  LegacyListPageQuerySchema,
  LegacyMoveSchema,
  LegacyPageQuerySchema,
  LegacyPaymentObjectSchema,
  LegacyPaymentSchema,
  LEGACY_SMALL_WRITE_BODY_LIMIT_BYTES,
  LegacyStatusSchema,
  LegacyTagListSchema,
} from './schemas.js';
import type { LegacyDeps } from './service.js';
import { inexactKeysUnder } from '../http/json-body.js';
import type { Rules } from '../rules/catalog.js';
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
import { legacyMeta as meta } from './schemas.js';

/** A child of the legacy plugin, so the gate (key, 403, counting, headers) runs first. */
export function localRoutes(d: LegacyDeps & { rules: () => Rules }) {
  return async function register(app: FastifyInstance): Promise<void> {
    const r = app.withTypeProvider<ZodTypeProvider>();
    const readMeta = (summary: string, ok: z.ZodType) => ({ schema: { ...meta, summary, response: { 200: ok } } });
    r.get('/api/bots/api/boards/', readMeta('Boards and their stages', z.array(LegacyBoardSchema)), async (request) =>
      listBoards(request.integration!.workspace),
    );
    r.get('/api/bots/api/statuses/', readMeta('Statuses', z.array(LegacyStatusSchema)), async (request) =>
      listStatuses(d, request.integration!.workspace),
    );
    r.get('/api/bots/api/groups/', readMeta('Groups', z.array(LegacyGroupSchema)), async (request) =>
      listGroups(d, request.integration!.workspace),
    );
    r.get(
      '/api/bots/api/tags/',
      {
        schema: {
          ...meta,
          summary: 'Tags (a page with page= or page_size=)',
          querystring: LegacyListPageQuerySchema,
          response: { 200: LegacyTagListSchema },
        },
      },
      async (request) => listTags(d, request.integration!.workspace, request.query),
    );
    r.get('/api/bots/api/info/', readMeta("The bot's integration and workspace", LegacyInfoSchema), async (request) => {
      const i = request.integration!;
      const state = await d.store.snapshot((rd) => rd.states.get(i.id));
      return {
        integration: { id: i.id, name: i.name },
        workspace: { id: i.workspace.id, name: i.workspace.name },
        deprecated: true,
        state,
        sunset: i.legacy.sunset,
      };
    });
    r.get(
      '/api/bots/api/leads/',
      {
        schema: {
          ...meta,
          summary: "This bot's leads, a page at a time",
          querystring: LegacyPageQuerySchema,
          response: { 200: LegacyLeadPageSchema },
        },
      },
      async (request) => listOwnLeads(d, request.integration!, request.query, '/api/bots/api/leads/'),
    );
    r.get(
      '/api/bots/api/leads/:id/',
      {
        schema: {
          ...meta,
          summary: "One of this bot's leads",
          params: LegacyLeadParamsSchema,
          response: { 200: LeadObjectSchema },
          problems: ['not-found'],
        },
      },
      async (request) => getOwnLead(d, request.integration!, request.params.id),
    );
    r.post(
      '/api/bots/api/leads/:id/move/',
      {
        bodyLimit: LEGACY_SMALL_WRITE_BODY_LIMIT_BYTES,
        schema: {
          ...meta,
          summary: 'Move the lead to a stage',
          params: LegacyLeadParamsSchema,
          body: LegacyMoveSchema,
          response: { 200: LeadObjectSchema },
          problems: ['not-found'],
        },
      },
      async (request) => moveOwnLead(d, request.integration!, request.params.id, request.body.stage),
    );
    r.get(
      '/api/bots/api/leads/:id/comments/',
      {
        schema: {
          ...meta,
          summary: 'Comments of the lead (a page with page= or page_size=)',
          params: LegacyLeadParamsSchema,
          querystring: LegacyListPageQuerySchema,
          response: { 200: LegacyCommentListSchema },
          problems: ['not-found'],
        },
      },
      async (request) => listComments(d, request.integration!, request.params.id, request.query),
    );
    r.post(
      '/api/bots/api/leads/:id/comments/',
      {
        bodyLimit: LEGACY_SMALL_WRITE_BODY_LIMIT_BYTES,
        schema: {
          ...meta,
          summary: 'Comment on the lead',
          params: LegacyLeadParamsSchema,
          body: LegacyCommentSchema,
          response: { 201: LegacyCommentObjectSchema },
          problems: ['not-found', 'limit-reached'],
        },
      },
      async (request, reply) =>
        reply.code(201).send(await addComment(d, request.integration!, request.params.id, request.body.text)),
    );
    r.post(
      '/api/bots/api/leads/:id/payments/',
      {
        bodyLimit: LEGACY_SMALL_WRITE_BODY_LIMIT_BYTES,
        schema: {
          ...meta,
          summary: 'Record a payment',
          params: LegacyLeadParamsSchema,
          body: LegacyPaymentSchema,
          response: { 201: LegacyPaymentObjectSchema },
          problems: ['not-found'],
        },
      },
      async (request, reply) =>
        reply
          .code(201)
          .send(
            await addPayment(
              d,
              request.integration!,
              request.params.id,
              request.body.amount,
              request.body.comment ?? null,
              inexactKeysUnder(request, '').has('amount'),
            ),
          ),
    );
    r.delete(
      '/api/bots/api/leads/:id/',
      {
        schema: {
          ...meta,
          summary: 'Delete the lead',
          params: LegacyLeadParamsSchema,
          response: { 204: z.null() },
          problems: ['not-found'],
        },
      },
      async (request, reply) => {
        await deleteOwnLead(d, request.integration!, request.params.id);
        return reply.code(204).send(null);
      },
    );
  };
}
