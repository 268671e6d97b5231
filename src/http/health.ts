// Liveness and readiness for orchestrators: alive, and database writable with rules loaded.
import type { FastifyInstance } from 'fastify';
import { NotReadyError, type Store } from '../store/store.js';
import type { RulesHolder } from '../rules/loader.js';
import type { RulesAcrossReplicas } from '../rules/replicas.js';
import { z } from 'zod';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { ProblemSchema, sendProblem } from '../errors.js';

export function healthRoutes(deps: {
  store: Store;
  rules: RulesHolder;
  sharedRules: Pick<RulesAcrossReplicas, 'recentSurvey'>;
}) {
  // Readiness as last answered by this app: a line when it changes, not one per poll (an orchestrator
  // polls every few seconds, through every outage). Null: ready, or not asked yet.
  let notReady: { reason: string; since: number; checks: number } | null = null;
  return async function register(fastify: FastifyInstance): Promise<void> {
    const app = fastify.withTypeProvider<ZodTypeProvider>();
    app.get(
      '/healthz',
      {
        schema: {
          tags: ['operations'],
          summary: 'The process is alive',
          response: { 200: z.object({ status: z.literal('ok') }) },
        },
      },
      async () => ({ status: 'ok' as const }),
    );
    const ready = z.object({
      status: z.literal('ready'),
      integrations: z.number().int(),
      rules_version: z.string().meta({
        description: 'The version (a hash of the files) of the rules this process runs: replicas that differ show here',
      }),
      rules_drift: z.boolean().nullable().meta({
        description:
          'Live replicas run different rules (GET /admin/v1/replicas names them); null when the replicas could not be asked. Drift does not make a replica unready: a rolling update has drift for a while',
      }),
    });
    app.get(
      '/readyz',
      {
        schema: {
          tags: ['operations'],
          summary: 'A write commits, the disk has room, and rules are loaded',
          response: { 200: ready, 503: ProblemSchema },
        },
      },
      async (request, reply) => {
        try {
          await deps.store.checkReady();
        } catch (error) {
          const { reason, message } =
            error instanceof NotReadyError
              ? error
              : { reason: 'unavailable', message: 'The database does not accept writes.' };
          if (notReady?.reason !== reason) {
            request.log.warn(
              { err: error, reason, ...(notReady ? { was: notReady.reason } : {}) },
              'readiness check failed',
            );
            notReady = { reason, since: notReady?.since ?? Date.now(), checks: notReady?.checks ?? 0 };
          }
          notReady.checks++;
          return sendProblem(reply, 'service-unavailable', `Not ready: ${message}`, { reason }, { 'retry-after': '5' });
        }
        if (notReady) {
          request.log.info(
            { was: notReady.reason, failed_checks: notReady.checks, not_ready_ms: Date.now() - notReady.since },
            'ready again',
          );
          notReady = null;
        }
        const survey = await deps.sharedRules.recentSurvey();
        return {
          status: 'ready' as const,
          integrations: deps.rules.current().integrations.size,
          rules_version: deps.rules.version().version,
          rules_drift: survey?.drift ?? null,
        };
      },
    );
  };
}
