// Liveness and readiness for orchestrators: alive, and database writable with rules loaded.
import type { FastifyInstance } from 'fastify';
import { NotReadyError, type Store } from './store/store.js';
import type { RulesHolder } from './rules/loader.js';
import type { RulesAcrossReplicas } from './rules/replicas.js';
import { z } from 'zod';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { ProblemSchema, sendProblem } from './errors.js';

export function healthRoutes(deps: { store: Store; rules: RulesHolder; sharedRules: Pick<RulesAcrossReplicas, 'recentSurvey'> }) {
  return async function register(fastify: FastifyInstance): Promise<void> {
    const app = fastify.withTypeProvider<ZodTypeProvider>();
    app.get(
      '/healthz',
      { schema: { tags: ['operations'], summary: 'The process is alive', response: { 200: z.object({ status: z.literal('ok') }) } } },
      async () => ({ status: 'ok' as const }),
    );
    const ready = z.object({
      status: z.literal('ready'),
      integrations: z.number().int(),
      rules_version: z.string().meta({ description: 'The version (a hash of the files) of the rules this process runs: replicas that differ show here' }),
      rules_drift: z.boolean().nullable().meta({
        description: 'Live replicas run different rules (GET /admin/v1/replicas names them); null when the replicas could not be asked. Drift does not make a replica unready: a rolling update has drift for a while',
      }),
    });
    app.get('/readyz', { schema: { tags: ['operations'], summary: 'A write commits, the disk has room, and rules are loaded', response: { 200: ready, 503: ProblemSchema } } }, async (request, reply) => {
      try {
        await deps.store.checkReady();
      } catch (error) {
        request.log.warn({ err: error }, 'readiness check failed');
        const { reason, message } = error instanceof NotReadyError ? error : { reason: 'unavailable', message: 'The database does not accept writes.' };
        return sendProblem(reply, 'service-unavailable', `Not ready: ${message}`, { reason }, { 'retry-after': '5' });
      }
      const survey = await deps.sharedRules.recentSurvey();
      return { status: 'ready' as const, integrations: deps.rules.current().integrations.size, rules_version: deps.rules.version().version, rules_drift: survey?.drift ?? null };
    });
  };
}
