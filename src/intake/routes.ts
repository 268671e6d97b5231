// v1 intake routes: parse (schema), call one service function, shape the reply.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Store } from '../store/store.js';
import type { RulesHolder } from '../rules/loader.js';
import { TEST_MODE_RESPONSE_HEADERS, v1Authenticator } from '../migration/authenticate.js';
import type { UsageRecorder } from '../migration/usage.js';
import { markFreeOfQuota, type IntegrationQuota } from '../rate-limit/quota.js';
import type { AuthFailureGuard } from '../rate-limit/auth-failures.js';
import {
  LEAD_BODY_LIMIT_BYTES,
  LEAD_BODY_MAX_VALUES,
  LeadSubmissionResponseSchema,
  LeadSubmissionSchema,
} from './schemas.js';
import { submitLead } from './service.js';
import {
  ANSWERS_BODY_LIMIT_BYTES,
  ANSWERS_BODY_MAX_VALUES,
  ANSWERS_COUNTED,
  AnswersResponseSchema,
  AnswersSubmissionSchema,
  type AnswersResult,
} from '../answers/schemas.js';
import { submitAnswers } from '../answers/service.js';
import { inexactKeysUnder } from '../http/json-body.js';
import { AppError } from '../errors.js';

/** How many answers had each result: for the log line and the metrics. */
const answerCounts = (a: AnswersResult) => ({
  written: a.written.length,
  unchanged: a.unchanged.length,
  kept_existing: a.kept_existing.length,
  unmapped: a.unmapped.length,
  invalid: a.invalid.length,
  not_kept: a.not_kept?.length ?? 0,
});

export function intakeRoutes(deps: {
  store: Store;
  rules: RulesHolder;
  usage: UsageRecorder;
  quota: IntegrationQuota;
  authFailures: AuthFailureGuard;
  refusedKeyHashes: ReadonlySet<string>;
}) {
  return async function register(app: FastifyInstance): Promise<void> {
    const r = app.withTypeProvider<ZodTypeProvider>();
    app.decorateRequest('v1TestMode', false);
    r.addHook('onRequest', v1Authenticator(deps));
    // After the key is known and before the body is read (rate-limit/quota.ts).
    deps.quota.register(app);
    // Every authenticated v1 call counts for the migration report, whatever its status; the 2xx apart;
    // a test key's calls as an interface of their own, never as v1 traffic (docs/api.md, "Test mode").
    r.addHook('onResponse', async (request, reply) => {
      if (!request.integration) return;
      const iface = request.v1TestMode ? 'v1-test' : 'v1';
      deps.usage.record(
        request.integration.id,
        iface,
        `${request.method} ${request.routeOptions.url}`,
        reply.statusCode < 300,
        undefined,
        request.apiKeyId,
      );
    });

    r.post(
      '/api/integrations/v1/leads/',
      {
        // The body is refused by its size, then by its values and answers counted on the raw text,
        // before it is parsed (json-body.ts).
        bodyLimit: LEAD_BODY_LIMIT_BYTES,
        config: { jsonLimits: { maxValues: LEAD_BODY_MAX_VALUES, counted: [ANSWERS_COUNTED] } },
        schema: {
          summary: 'Submit a lead',
          description: 'Idempotent per event_id: a resend of the same body is answered with replayed true.',
          tags: ['v1'],
          security: [{ integrationBearer: [] }],
          body: LeadSubmissionSchema,
          response: {
            200: LeadSubmissionResponseSchema.describe(
              'The inquiry joined an existing lead, or the request is a replay',
            ),
            201: LeadSubmissionResponseSchema.describe('A new lead was created'),
          },
          problems: ['event-id-conflict', 'limit-reached'],
          responseHeaders: TEST_MODE_RESPONSE_HEADERS,
        },
      },
      async (request, reply) => {
        const integration = request.integration!;
        const rehearsal = request.v1TestMode;
        // Set by the key check with v1TestMode: a test call always has its key's id.
        const testKeyId = rehearsal ? request.apiKeyId! : undefined;
        const result = await submitLead(deps, integration, request.body, {
          inexactAnswers: inexactKeysUnder(request, '/answers'),
          testKeyId,
        });
        if (result.body.replayed) markFreeOfQuota(request);
        reply.logContext = {
          event_id: request.body.event_id,
          // A test call counts in the metrics as `test`, whatever it would have been: nothing was created.
          outcome: rehearsal ? 'test' : result.body.replayed ? 'replayed' : result.body.intake_outcome,
          ...(rehearsal ? { test_outcome: result.body.intake_outcome } : {}),
          answers: answerCounts(result.body.answers),
        };
        return reply.code(result.status).send(result.body);
      },
    );

    r.post(
      '/api/integrations/v1/leads/answers/',
      {
        bodyLimit: ANSWERS_BODY_LIMIT_BYTES,
        config: { jsonLimits: { maxValues: ANSWERS_BODY_MAX_VALUES, counted: [ANSWERS_COUNTED] } },
        schema: {
          summary: 'Submit answers about a lead',
          description:
            'Writes answers into the custom fields of the lead of a person this integration submitted. 404 when there is none yet: submit the lead, then resend with the same event_id.',
          tags: ['v1'],
          security: [{ integrationBearer: [] }],
          body: AnswersSubmissionSchema,
          response: { 200: AnswersResponseSchema },
          problems: ['not-found', 'event-id-conflict', 'limit-reached'],
          responseHeaders: TEST_MODE_RESPONSE_HEADERS,
        },
      },
      async (request, reply) => {
        const rehearsal = request.v1TestMode;
        // Set by the key check with v1TestMode: a test call always has its key's id.
        const testKeyId = rehearsal ? request.apiKeyId! : undefined;
        const result = await submitAnswers(deps, request.integration!, request.body, {
          inexact: inexactKeysUnder(request, '/answers'),
          testKeyId,
        }).catch((error: unknown) => {
          // The answer is the same 404; the service team sees it in the migration report (docs/runbook.md).
          // A test call's 404 is the bot author's own rehearsal, not a person the bot lost: not counted.
          if (!rehearsal && error instanceof AppError && error.code === 'not-found')
            deps.usage.recordNotFound(request.integration!.id, request.body.external_contact_id);
          throw error;
        });
        if (result.replayed) markFreeOfQuota(request);
        reply.logContext = {
          event_id: request.body.event_id,
          outcome: rehearsal ? 'test' : result.replayed ? 'replayed' : 'answered',
          answers: answerCounts(result.answers),
        };
        return result;
      },
    );
  };
}
