// Admin API for keys and migration state (docs/runbook.md): issue, import, renew, switch off, roll back.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Store } from '../store/store.js';
import type { RulesHolder } from '../rules/loader.js';
import { adminAuthenticator } from './authenticate.js';
import type { AuthFailureGuard } from '../rate-limit/auth-failures.js';
import type { UsageRecorder } from '../migration/usage.js';
import {
  importLegacyKey,
  issueTestKey,
  issueV1Key,
  relinkLegacyLeads,
  renewKeys,
  revokeKey,
  rollback,
  switchOff,
} from '../migration/service.js';
import { migrationReport, MigrationReportSchema } from '../migration/report.js';
import { listAudit, listKeys } from '../migration/reads.js';
import {
  clearPorted,
  markPorted,
  notFoundAnswers,
  NotFoundPageSchema,
  NotFoundQuerySchema,
  PortedFlagSchema,
  portedView,
} from '../migration/porting.js';
import { TestMatchPageSchema, TestMatchQuerySchema, testMatches } from '../migration/test-matches.js';
import { integrationByRef } from './integration-ref.js';
import { portingGuide } from '../porting/service.js';
import { PortingGuideSchema } from '../porting/guide.js';
import { guideMarkdown, wantsMarkdown } from '../porting/markdown.js';
import {
  auditView,
  integrationViews,
  issuedKeyView,
  keyView,
  linkView,
  listedKeyView,
  listOf,
  stateView,
} from './views.js';
import {
  ReasonBodySchema,
  PortedBodySchema,
  AuditEntrySchema,
  AuditQuerySchema,
  ImportKeyBodySchema,
  IntegrationParamsSchema,
  KeyParamsSchema,
  LinkReportSchema,
  IntegrationSummarySchema,
  IssuedKeySchema,
  ListedKeySchema,
  KeySummarySchema,
  ReportQuerySchema,
  PortingGuideQuerySchema,
  RollbackBodySchema,
  StateSchema,
  SwitchOffBodySchema,
} from './schemas.js';

const meta = { tags: ['admin'], security: [{ adminBearer: [] }] };
const params = IntegrationParamsSchema;

/** The audit actor is the credential's operator; the body may add a reason. */
const who = (request: { adminActor: string | null; body: { reason?: string | undefined } | null | undefined }) => ({
  actor: request.adminActor!,
  reason: request.body?.reason ?? null,
});

/** What the admin API's integration routes are given (app.ts): the services and the admin credentials. */
export interface AdminRoutesDeps {
  store: Store;
  rules: RulesHolder;
  usage: UsageRecorder;
  adminToken: string;
  adminTokenName: string;
  authFailures: AuthFailureGuard;
}

export function migrationRoutes(deps: AdminRoutesDeps) {
  const find = (ref: string) => integrationByRef(deps.rules, ref);

  return async function register(app: FastifyInstance): Promise<void> {
    const r = app.withTypeProvider<ZodTypeProvider>();
    r.addHook('onRequest', adminAuthenticator(deps));

    r.get(
      '/admin/v1/integrations',
      {
        schema: {
          ...meta,
          summary: 'List integrations with their migration state',
          response: { 200: z.object({ items: z.array(IntegrationSummarySchema) }) },
        },
      },
      async () => integrationViews(deps.store, [...deps.rules.current().integrations.values()]),
    );

    r.post(
      '/admin/v1/integrations/:integration/keys',
      {
        schema: {
          ...meta,
          summary: 'Issue the additional v1 key (shown once); legacy -> migrating; links legacy leads',
          params,
          body: ReasonBodySchema,
          response: { 201: IssuedKeySchema },
          problems: ['not-found'],
        },
      },
      async (request, reply) => {
        const result = await issueV1Key({ ...deps }, find(request.params.integration), who(request));
        return reply.code(201).send(issuedKeyView(result, result.state, linkView(result.links)));
      },
    );

    r.post(
      '/admin/v1/integrations/:integration/keys/test',
      {
        schema: {
          ...meta,
          summary: 'Issue a v1 test key (shown once): its calls run the whole v1 path and keep nothing; no state moves',
          params,
          body: ReasonBodySchema,
          response: { 201: IssuedKeySchema },
          problems: ['not-found'],
        },
      },
      async (request, reply) => {
        const result = await issueTestKey(deps, find(request.params.integration), who(request));
        return reply.code(201).send(issuedKeyView(result, result.state));
      },
    );

    r.post(
      '/admin/v1/integrations/:integration/keys/import',
      {
        schema: {
          ...meta,
          summary: 'Import an existing legacy key, by value or SHA-256',
          params,
          body: ImportKeyBodySchema,
          response: { 201: KeySummarySchema },
          problems: ['not-found', 'conflict'],
        },
      },
      async (request, reply) => {
        const key = await importLegacyKey(deps, find(request.params.integration), {
          ...request.body,
          actor: request.adminActor!,
        });
        return reply.code(201).send(keyView(key));
      },
    );

    r.post(
      '/admin/v1/integrations/:integration/keys/renew',
      {
        schema: {
          ...meta,
          summary: '"Renew key": revoke every key at once (test keys too) and issue one new v1 key',
          params,
          body: ReasonBodySchema,
          response: { 201: IssuedKeySchema },
          problems: ['not-found'],
        },
      },
      async (request, reply) => {
        const result = await renewKeys(deps, find(request.params.integration), who(request));
        return reply.code(201).send(issuedKeyView(result, result.state, { revoked_keys: result.revoked }));
      },
    );

    r.get(
      '/admin/v1/integrations/:integration/keys',
      {
        schema: {
          ...meta,
          summary: 'List keys by prefix, never by value',
          params,
          response: { 200: z.object({ items: z.array(ListedKeySchema) }) },
          problems: ['not-found'],
        },
      },
      async (request) => {
        const integration = find(request.params.integration);
        const keys = await listKeys(deps.store, integration);
        return listOf(keys.map(listedKeyView));
      },
    );

    r.post(
      '/admin/v1/integrations/:integration/keys/:key/revoke',
      {
        schema: {
          ...meta,
          summary: 'Revoke one key at once; the other keys go on working',
          params: KeyParamsSchema,
          body: ReasonBodySchema,
          response: { 200: KeySummarySchema },
          problems: ['not-found', 'conflict'],
        },
      },
      async (request) => {
        const k = await revokeKey(deps, find(request.params.integration), request.params.key, who(request));
        return keyView(k);
      },
    );

    r.post(
      '/admin/v1/integrations/:integration/link',
      {
        schema: {
          ...meta,
          summary: 'Re-run the linking of legacy-created leads (after a rule fix), without a new key',
          params,
          body: ReasonBodySchema,
          response: { 200: LinkReportSchema },
          problems: ['not-found'],
        },
      },
      async (request) => {
        const links = await relinkLegacyLeads(deps, find(request.params.integration), who(request));
        return linkView(links);
      },
    );

    r.post(
      '/admin/v1/integrations/:integration/switch-off',
      {
        schema: {
          ...meta,
          summary: 'Switch the deprecated interface off (403 from then on)',
          params,
          body: SwitchOffBodySchema,
          response: { 200: StateSchema },
          problems: ['not-found', 'conflict'],
        },
      },
      async (request) => {
        const integration = find(request.params.integration);
        const b = request.body;
        const state = await switchOff(deps, integration, {
          actor: request.adminActor!,
          reason: b.reason,
          force: b.force,
          quietPeriodHours: b.quiet_period_hours,
        });
        return stateView(integration, state);
      },
    );

    r.post(
      '/admin/v1/integrations/:integration/rollback',
      {
        schema: {
          ...meta,
          summary: 'Roll a switch-off back: the old key works again',
          params,
          body: RollbackBodySchema,
          response: { 200: StateSchema },
          problems: ['not-found', 'conflict'],
        },
      },
      async (request) => {
        const integration = find(request.params.integration);
        return stateView(
          integration,
          await rollback(deps, integration, { actor: request.adminActor!, reason: request.body.reason }),
        );
      },
    );

    r.post(
      '/admin/v1/integrations/:integration/ported',
      {
        schema: {
          ...meta,
          summary: 'Mark the integration "ported" (a flag beside the state); 409 when marked already',
          params,
          body: PortedBodySchema,
          response: { 200: PortedFlagSchema },
          problems: ['not-found', 'conflict'],
        },
      },
      async (request) => {
        const flag = await markPorted(deps, find(request.params.integration), {
          actor: request.adminActor!,
          note: request.body?.note ?? null,
          role: 'service_team',
        });
        return portedView(flag)!;
      },
    );

    r.delete(
      '/admin/v1/integrations/:integration/ported',
      {
        schema: {
          ...meta,
          summary: 'Clear the "ported" flag (the service team only); 409 when not marked',
          params,
          body: ReasonBodySchema,
          response: { 200: z.object({ ported: z.null() }) },
          problems: ['not-found', 'conflict'],
        },
      },
      async (request) => {
        await clearPorted(deps, find(request.params.integration), { ...who(request), role: 'service_team' });
        return { ported: null };
      },
    );

    r.get(
      '/admin/v1/integrations/:integration/not-found',
      {
        schema: {
          ...meta,
          summary:
            'Answers calls answered 404, per external_contact_id, the latest first, with the unlinked legacy leads of each person',
          params,
          querystring: NotFoundQuerySchema,
          response: { 200: NotFoundPageSchema },
          problems: ['not-found', 'bad-request'],
        },
      },
      async (request) => notFoundAnswers(deps, find(request.params.integration), request.query),
    );

    r.get(
      '/admin/v1/integrations/:integration/test-matches',
      {
        schema: {
          ...meta,
          summary:
            'Live persons that test calls found, per test key and person, the newest first (docs/api.md, "Test mode")',
          params,
          querystring: TestMatchQuerySchema,
          response: { 200: TestMatchPageSchema },
          problems: ['not-found', 'bad-request'],
        },
      },
      async (request) => testMatches(deps, find(request.params.integration), request.query),
    );

    r.get(
      '/admin/v1/integrations/:integration/audit',
      {
        schema: {
          ...meta,
          summary: 'Audit log of one integration, newest first',
          params,
          querystring: AuditQuerySchema,
          response: { 200: z.object({ items: z.array(AuditEntrySchema) }) },
          problems: ['not-found'],
        },
      },
      async (request) => {
        const integration = find(request.params.integration);
        return listOf((await listAudit(deps.store, integration, request.query.limit)).map(auditView));
      },
    );

    r.get(
      '/admin/v1/audit',
      {
        schema: {
          ...meta,
          summary: 'Audit log of every integration, newest first',
          querystring: AuditQuerySchema,
          response: { 200: z.object({ items: z.array(AuditEntrySchema) }) },
        },
      },
      async (request) => listOf((await listAudit(deps.store, null, request.query.limit)).map(auditView)),
    );

    r.get(
      '/admin/v1/integrations/:integration/report',
      {
        schema: {
          ...meta,
          summary: 'Migration report: legacy and v1 calls, ignored fields, unlinked leads, readiness',
          params,
          querystring: ReportQuerySchema,
          response: { 200: MigrationReportSchema },
          problems: ['not-found'],
        },
      },
      async (request) => migrationReport(deps, find(request.params.integration), request.query.quiet_period_hours),
    );

    r.get(
      '/admin/v1/integrations/:integration/porting-guide',
      {
        schema: {
          ...meta,
          summary:
            'Porting guide: each legacy route the integration called in 30 days and the v1 request that replaces it (JSON, or Markdown for format=markdown or Accept: text/markdown)',
          params,
          querystring: PortingGuideQuerySchema,
          response: {
            200: {
              description: 'The guide as JSON, or as Markdown text',
              content: { 'application/json': { schema: PortingGuideSchema }, 'text/markdown': { schema: z.string() } },
            },
          },
          problems: ['not-found'],
        },
      },
      async (request, reply) => {
        const guide = await portingGuide(deps, find(request.params.integration));
        if (wantsMarkdown(request.query.format, request.headers.accept))
          return reply.header('vary', 'Accept').type('text/markdown; charset=utf-8').send(guideMarkdown(guide));
        return reply.header('vary', 'Accept').send(guide);
      },
    );
  };
}
