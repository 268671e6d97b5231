// The service team's HTTP surface (/admin/v1), over the same services as everything else.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Store } from '../store/store.js';
import type { RulesHolder } from '../rules/loader.js';
import { adminAuthenticator } from './authenticate.js';
import type { AuthFailureGuard } from '../rate-limit/auth-failures.js';
import { integrationByRef } from './integration-ref.js';
import { listReview } from '../migration/reads.js';
import { actOnLead, getLead, listLeads } from '../lead/operator.js';
import { LeadObjectSchema } from '../lead/schemas.js';
import { setFieldValue } from '../lead/field-edit.js';
import { applyStoredAnswers } from '../answers/unmapped.js';
import {
  CloseLeadBodySchema,
  IntegrationParamsSchema,
  LeadParamsSchema,
  MoveLeadBodySchema,
  ReviewItemSchema,
  ReviewQuerySchema,
  FieldParamsSchema,
  SetFieldBodySchema,
  AppliedUnmappedSchema,
  LeadListQuerySchema,
} from './schemas.js';

const meta = { tags: ['admin'], security: [{ adminBearer: [] }] };

export function adminRoutes(deps: {
  store: Store;
  rules: RulesHolder;
  adminToken: string;
  adminTokenName: string;
  authFailures: AuthFailureGuard;
}) {
  const findIntegration = (ref: string) => integrationByRef(deps.rules, ref);
  const leadDeps = { store: deps.store, rules: () => deps.rules.current() };

  return async function register(app: FastifyInstance): Promise<void> {
    const r = app.withTypeProvider<ZodTypeProvider>();
    r.addHook('onRequest', adminAuthenticator(deps));

    r.get(
      '/admin/v1/integrations/:integration/review',
      {
        schema: {
          ...meta,
          summary: 'Submissions that need review',
          params: IntegrationParamsSchema,
          querystring: ReviewQuerySchema,
          response: { 200: z.object({ items: z.array(ReviewItemSchema) }) },
          problems: ['not-found'],
        },
      },
      async (request) => {
        const integration = findIntegration(request.params.integration);
        const items = await listReview(deps.store, integration, request.query.limit);
        return {
          items: items.map((s) => ({
            submission_id: s.id,
            event_id: s.eventId,
            lead_id: s.leadId,
            contact_id: s.contactId,
            reason: s.reviewReason,
            created_at: s.createdAt,
          })),
        };
      },
    );

    const leadResponse = { 200: LeadObjectSchema };
    r.get(
      '/admin/v1/leads',
      {
        schema: {
          ...meta,
          summary: 'List leads, filtered by stage, integration and custom field values',
          querystring: LeadListQuerySchema,
          response: { 200: z.object({ items: z.array(LeadObjectSchema), next_before: z.string().nullable() }) },
          problems: ['not-found'],
        },
      },
      (request) => listLeads(leadDeps, { ...request.query, fields: request.query.field }),
    );
    r.get(
      '/admin/v1/leads/:id',
      {
        schema: {
          ...meta,
          summary: 'A lead as operators see it',
          params: LeadParamsSchema,
          response: leadResponse,
          problems: ['not-found'],
        },
      },
      (request) => getLead(leadDeps, request.params.id),
    );
    r.post(
      '/admin/v1/leads/:id/move',
      {
        schema: {
          ...meta,
          summary: 'Move a lead to another stage',
          params: LeadParamsSchema,
          body: MoveLeadBodySchema,
          response: leadResponse,
          problems: ['not-found'],
        },
      },
      async (request) => (await actOnLead(leadDeps, request.params.id, { kind: 'move', stageId: request.body.stage }))!,
    );
    r.post(
      '/admin/v1/leads/:id/close',
      {
        schema: {
          ...meta,
          summary: 'Close a lead',
          params: LeadParamsSchema,
          body: CloseLeadBodySchema,
          response: leadResponse,
          problems: ['not-found'],
        },
      },
      async (request) =>
        (await actOnLead(leadDeps, request.params.id, {
          kind: 'close',
          outcome: request.body.outcome ?? null,
          reason: request.body.reason ?? null,
          closedBy: request.body.closed_by ?? null,
        }))!,
    );
    r.post(
      '/admin/v1/leads/:id/reopen',
      {
        schema: {
          ...meta,
          summary: 'Reopen a closed lead',
          params: LeadParamsSchema,
          response: leadResponse,
          problems: ['not-found'],
        },
      },
      async (request) => (await actOnLead(leadDeps, request.params.id, { kind: 'reopen' }))!,
    );
    r.delete(
      '/admin/v1/leads/:id',
      {
        schema: {
          ...meta,
          summary: 'Delete a lead',
          params: LeadParamsSchema,
          response: { 204: z.null() },
          problems: ['not-found'],
        },
      },
      async (request, reply) => {
        await actOnLead(leadDeps, request.params.id, { kind: 'delete' });
        return reply.code(204).send(null);
      },
    );

    r.put(
      '/admin/v1/leads/:id/fields/:field',
      {
        schema: {
          ...meta,
          summary: 'Set a custom field as an employee, an import or an automation',
          params: FieldParamsSchema,
          body: SetFieldBodySchema,
          response: { 200: z.object({ outcome: z.enum(['written', 'unchanged']), lead: LeadObjectSchema }) },
          problems: ['not-found'],
        },
      },
      (request) =>
        setFieldValue(leadDeps, {
          leadId: request.params.id,
          fieldKey: request.params.field,
          value: request.body.value,
          writer: request.body.written_by,
        }),
    );

    r.post(
      '/admin/v1/integrations/:integration/answers/apply-unmapped',
      {
        schema: {
          ...meta,
          summary: 'Apply stored unmapped answers whose key is mapped now (audited as stored_answers_applied)',
          params: IntegrationParamsSchema,
          response: { 200: AppliedUnmappedSchema },
          problems: ['not-found'],
        },
      },
      (request) =>
        applyStoredAnswers(deps.store, findIntegration(request.params.integration), { actor: request.adminActor! }),
    );
  };
}
