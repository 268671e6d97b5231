// Liveness and readiness for orchestrators: alive, and database writable with rules loaded.
import type { FastifyInstance } from 'fastify';
import { NotReadyError, type Store } from './store/store.js';
import type { RulesHolder } from './rules/loader.js';
import { z } from 'zod';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { ProblemSchema, sendProblem } from './errors.js';

export function healthRoutes(deps: { store: Store; rules: RulesHolder }) {
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
    });
    app.get('/readyz', { schema: { tags: ['operations'], summary: 'A write commits, the disk has room, and rules are loaded', response: { 200: ready, 503: ProblemSchema } } }, async (request, reply) => {
      try {
        await deps.store.checkReady();
      } catch (error) {
        request.log.warn({ err: error }, 'readiness check failed');
        const { reason, message } = error instanceof NotReadyError ? error : { reason: 'unavailable', message: 'The database does not accept writes.' };
        return sendProblem(reply, 'service-unavailable', `Not ready: ${message}`, { reason }, { 'retry-after': '5' });
      }
      return { status: 'ready' as const, integrations: deps.rules.current().integrations.size, rules_version: deps.rules.version().version };
    });
  };
}
