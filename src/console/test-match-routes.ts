// The live persons that an integration's test calls found (docs/api.md, "Test mode"), page by page with
// the admin API's cursor (GET .../test-matches): the service team's page alone.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Store } from '../store/store.js';
import type { RulesHolder } from '../rules/loader.js';
import { TEST_MATCHES_PAGE_DEFAULT, testMatches } from '../migration/test-matches.js';
import { refuseUnlessServiceTeam } from './actions.js';
import { integrationForViewer } from './overview.js';
import { ConsoleIntegrationParamsSchema, NotFoundPageQuerySchema } from './schemas.js';
import { render } from './pages.js';
import type { Viewer } from './users.js';

export function testMatchRoutes(
  app: FastifyInstance,
  deps: { store: Store; rules: RulesHolder },
  h: { signedIn(request: FastifyRequest, reply: FastifyReply): Viewer | null },
): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  // A cursor that is not one is a 400 page, as on the answers 404s.
  routes.get(
    '/console/integrations/:integration/test-matches',
    { schema: { hide: true, params: ConsoleIntegrationParamsSchema, querystring: NotFoundPageQuerySchema } },
    async (request, reply) => {
      const viewer = h.signedIn(request, reply);
      if (viewer === null) return reply;
      const integration = integrationForViewer(deps.rules.current(), viewer, request.params.integration);
      refuseUnlessServiceTeam(viewer);
      const page = await testMatches(deps, integration, {
        limit: TEST_MATCHES_PAGE_DEFAULT,
        after: request.query.after,
      });
      return render(reply, 'test-matches', {
        title: `Test calls that found a person · ${integration.name}`,
        integration,
        page,
        limit: TEST_MATCHES_PAGE_DEFAULT,
      });
    },
  );
}
