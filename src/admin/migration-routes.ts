// Admin API for keys and migration state (contract 6): issue, import, renew, switch off, roll back.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ProblemSchema } from '../errors.js';
import type { Store } from '../db/store.js';
import type { RulesHolder } from '../rules/loader.js';
import type { Integration } from '../rules/catalog.js';
import { adminAuthenticator } from '../migration/authenticate.js';
import type { AuthFailureGuard } from '../rate-limit/auth-failures.js';
import type { IssuedKey } from '../migration/keys.js';
import type { UsageRecorder } from '../migration/usage.js';
import { importLegacyKey, issueV1Key, relinkLegacyLeads, renewKeys, revokeKey, rollback, switchOff } from '../migration/service.js';
import { migrationReport } from '../migration/report.js';
import type { AuditEntry, MigrationState } from '../migration/state-store.js';
import { integrationByRef } from './integration-ref.js';
import {
  ReasonBodySchema,
  AuditEntrySchema,
  AuditQuerySchema,
  ImportKeyBodySchema,
  IntegrationParamsSchema,
  KeyParamsSchema,
  LinkReportSchema,
  IntegrationSummarySchema,
  IssuedKeySchema,
  KeySummarySchema,
  ReportQuerySchema,
  RollbackBodySchema,
  StateSchema,
  SwitchOffBodySchema,
} from './schemas.js';

const problems = { '4XX': ProblemSchema, '5XX': ProblemSchema };
const meta = { tags: ['admin'], security: [{ adminBearer: [] }] };
const params = IntegrationParamsSchema;

/** The audit actor is the credential's operator; the body may add a reason. */
const who = (request: { adminActor: string | null; body: { reason?: string | undefined } | null | undefined }) => ({ actor: request.adminActor!, reason: request.body?.reason ?? null });

const issuedBody = ({ key, secret }: IssuedKey, state: MigrationState) => ({
  id: key.id,
  integration_id: key.integrationId,
  kind: key.kind,
  prefix: key.prefix,
  key: secret,
  created_at: key.createdAt,
  state,
});

const auditBody = (e: AuditEntry) => ({
  id: e.id,
  integration_id: e.integrationId,
  action: e.action,
  from_state: e.fromState,
  to_state: e.toState,
  actor: e.actor,
  reason: e.reason,
  details: e.details,
  at: e.at,
});

export function migrationRoutes(deps: { store: Store; rules: RulesHolder; usage: UsageRecorder; adminToken: string; adminTokenName: string; authFailures: AuthFailureGuard }) {
  const find = (ref: string) => integrationByRef(deps.rules, ref);
  const stateBody = (i: Integration, state: MigrationState) => ({ integration_id: i.id, handle: i.handle, state });

  return async function register(app: FastifyInstance): Promise<void> {
    const r = app.withTypeProvider<ZodTypeProvider>();
    r.addHook('onRequest', adminAuthenticator(deps));

    r.get(
      '/admin/v1/integrations',
      { schema: { ...meta, summary: 'List integrations with their migration state', response: { 200: z.object({ integrations: z.array(IntegrationSummarySchema) }), ...problems } } },
      async () => {
        const list = [...deps.rules.current().integrations.values()];
        const states = await deps.store.read((rd) => Promise.all(list.map((i) => rd.states.get(i.id))));
        return {
          integrations: list.map((i, n) => ({
            id: i.id,
            handle: i.handle,
            name: i.name,
            workspace: { id: i.workspace.id, slug: i.workspace.slug, name: i.workspace.name },
            state: states[n]!,
          })),
        };
      },
    );

    r.post(
      '/admin/v1/integrations/:integration/keys',
      { schema: { ...meta, summary: 'Issue the additional v1 key (shown once); legacy -> migrating; links legacy leads', params, body: ReasonBodySchema, response: { 201: IssuedKeySchema, ...problems } } },
      async (request, reply) => {
        const result = await issueV1Key({ ...deps }, find(request.params.integration), who(request));
        return reply.code(201).send({ ...issuedBody(result, result.state), linked_leads: result.links.linked, unlinked_leads: result.links.unlinked });
      },
    );

    r.post(
      '/admin/v1/integrations/:integration/keys/import',
      { schema: { ...meta, summary: 'Import an existing legacy key, by value or SHA-256', params, body: ImportKeyBodySchema, response: { 201: KeySummarySchema, ...problems } } },
      async (request, reply) => {
        const key = await importLegacyKey(deps, find(request.params.integration), { ...request.body, actor: request.adminActor! });
        return reply.code(201).send({ id: key.id, kind: key.kind, prefix: key.prefix, created_at: key.createdAt, created_by: key.createdBy, revoked_at: null });
      },
    );

    r.post(
      '/admin/v1/integrations/:integration/keys/renew',
      { schema: { ...meta, summary: '"Renew key": revoke every key at once and issue one new v1 key', params, body: ReasonBodySchema, response: { 201: IssuedKeySchema, ...problems } } },
      async (request, reply) => {
        const result = await renewKeys(deps, find(request.params.integration), who(request));
        return reply.code(201).send({ ...issuedBody(result, result.state), revoked_keys: result.revoked });
      },
    );

    r.get(
      '/admin/v1/integrations/:integration/keys',
      { schema: { ...meta, summary: 'List keys by prefix, never by value', params, response: { 200: z.object({ keys: z.array(KeySummarySchema) }), ...problems } } },
      async (request) => {
        const integration = find(request.params.integration);
        const keys = await deps.store.read((rd) => rd.keys.listForIntegration(integration.id));
        return { keys: keys.map((k) => ({ id: k.id, kind: k.kind, prefix: k.prefix, created_at: k.createdAt, created_by: k.createdBy, revoked_at: k.revokedAt })) };
      },
    );

    r.post(
      '/admin/v1/integrations/:integration/keys/:key/revoke',
      { schema: { ...meta, summary: 'Revoke one key at once; the other keys go on working', params: KeyParamsSchema, body: ReasonBodySchema, response: { 200: KeySummarySchema, ...problems } } },
      async (request) => {
        const k = await revokeKey(deps, find(request.params.integration), request.params.key, who(request));
        return { id: k.id, kind: k.kind, prefix: k.prefix, created_at: k.createdAt, created_by: k.createdBy, revoked_at: k.revokedAt };
      },
    );

    r.post(
      '/admin/v1/integrations/:integration/link',
      { schema: { ...meta, summary: 'Re-run the linking of legacy-created leads (after a rule fix), without a new key', params, body: ReasonBodySchema, response: { 200: LinkReportSchema, ...problems } } },
      async (request) => {
        const links = await relinkLegacyLeads(deps, find(request.params.integration), who(request));
        return { linked_leads: links.linked, unlinked_leads: links.unlinked };
      },
    );

    r.post(
      '/admin/v1/integrations/:integration/switch-off',
      { schema: { ...meta, summary: 'Switch the deprecated interface off (403 from then on)', params, body: SwitchOffBodySchema, response: { 200: StateSchema, ...problems } } },
      async (request) => {
        const integration = find(request.params.integration);
        const b = request.body;
        const state = await switchOff(deps, integration, { actor: request.adminActor!, reason: b.reason, force: b.force, quietPeriodHours: b.quiet_period_hours });
        return stateBody(integration, state);
      },
    );

    r.post(
      '/admin/v1/integrations/:integration/rollback',
      { schema: { ...meta, summary: 'Roll a switch-off back: the old key works again', params, body: RollbackBodySchema, response: { 200: StateSchema, ...problems } } },
      async (request) => {
        const integration = find(request.params.integration);
        return stateBody(integration, await rollback(deps, integration, { actor: request.adminActor!, reason: request.body.reason }));
      },
    );

    r.get(
      '/admin/v1/integrations/:integration/audit',
      { schema: { ...meta, summary: 'Audit log of one integration, newest first', params, querystring: AuditQuerySchema, response: { 200: z.object({ entries: z.array(AuditEntrySchema) }), ...problems } } },
      async (request) => {
        const integration = find(request.params.integration);
        return { entries: (await deps.store.read((rd) => rd.states.listAudit(integration.id, request.query.limit))).map(auditBody) };
      },
    );

    r.get(
      '/admin/v1/audit',
      { schema: { ...meta, summary: 'Audit log of every integration, newest first', querystring: AuditQuerySchema, response: { 200: z.object({ entries: z.array(AuditEntrySchema) }), ...problems } } },
      async (request) => ({ entries: (await deps.store.read((rd) => rd.states.listAudit(null, request.query.limit))).map(auditBody) }),
    );

    r.get(
      '/admin/v1/integrations/:integration/report',
      { schema: { ...meta, summary: 'Migration report: legacy and v1 calls, ignored fields, unlinked leads, readiness', params, querystring: ReportQuerySchema } },
      async (request) => migrationReport(deps, find(request.params.integration), request.query.quiet_period_hours),
    );
  };
}
