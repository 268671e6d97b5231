// Liveness and readiness for orchestrators: alive, and database writable with rules loaded.
import type { FastifyInstance } from 'fastify';
import type { Store } from './db/store.js';
import type { RulesHolder } from './rules/loader.js';
import { sendProblem } from './errors.js';

export function healthRoutes(deps: { store: Store; rules: RulesHolder }) {
  return async function register(app: FastifyInstance): Promise<void> {
    app.get('/healthz', { schema: { tags: ['operations'], summary: 'The process is alive' } }, async () => ({ status: 'ok' }));
    app.get('/readyz', { schema: { tags: ['operations'], summary: 'Database writable and rules loaded' } }, async (request, reply) => {
      try {
        await deps.store.checkReady();
      } catch (error) {
        request.log.warn({ err: error }, 'readiness check failed');
        return sendProblem(reply, 'service-unavailable', 'The database does not accept writes.');
      }
      return { status: 'ready', integrations: deps.rules.current().integrations.size };
    });
  };
}
