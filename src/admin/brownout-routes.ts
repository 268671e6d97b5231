// Admin API for an integration's brownout windows (docs/runbook.md, "2b. Brownouts"): add a window,
// list the windows in effect (the rules' and the stored ones), cancel a stored one. Each change is
// audited under the credential's operator.
import { z } from 'zod';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import {
  addBrownout,
  BrownoutEntrySchema,
  BrownoutInputSchema,
  BrownoutPageQuerySchema,
  BrownoutPageSchema,
  cancelBrownout,
  listBrownouts,
} from '../migration/brownout-windows.js';
import { adminAuthenticator } from './authenticate.js';
import { integrationByRef } from './integration-ref.js';
import { IntegrationParamsSchema } from './schemas.js';
import type { AdminRoutesDeps } from './migration-routes.js';

const meta = { tags: ['admin'], security: [{ adminBearer: [] }] };
const PATH = '/admin/v1/integrations/:integration/brownouts';
const WindowParamsSchema = IntegrationParamsSchema.extend({
  id: z.string().min(1).max(200).meta({ description: "The window's id, as the list gives it" }),
});

export function brownoutRoutes(deps: AdminRoutesDeps) {
  const find = (ref: string) => integrationByRef(deps.rules, ref);
  return async function register(app: FastifyInstance): Promise<void> {
    const r = app.withTypeProvider<ZodTypeProvider>();
    r.addHook('onRequest', adminAuthenticator(deps));

    r.post(
      PATH,
      {
        schema: {
          ...meta,
          summary: 'Add a brownout window: every call with the legacy key inside it is refused with 403',
          params: IntegrationParamsSchema,
          body: BrownoutInputSchema,
          response: { 201: BrownoutEntrySchema },
          problems: ['not-found', 'conflict', 'limit-reached', 'validation-failed'],
        },
      },
      async (request, reply) => {
        const integration = find(request.params.integration);
        const entry = await addBrownout(deps, integration, { ...request.body, actor: request.adminActor! });
        return reply.code(201).send(entry);
      },
    );

    r.get(
      PATH,
      {
        schema: {
          ...meta,
          summary: "The integration's brownout windows, the rules' and the stored ones, the earliest first",
          params: IntegrationParamsSchema,
          querystring: BrownoutPageQuerySchema,
          response: { 200: BrownoutPageSchema },
          problems: ['not-found', 'bad-request'],
        },
      },
      async (request) => listBrownouts(deps, find(request.params.integration), request.query),
    );

    r.delete(
      `${PATH}/:id`,
      {
        schema: {
          ...meta,
          summary: 'Cancel a stored brownout window (a window of the rules is removed from the rules: 409)',
          params: WindowParamsSchema,
          response: { 200: BrownoutEntrySchema },
          problems: ['not-found', 'conflict'],
        },
      },
      async (request) =>
        cancelBrownout(deps, find(request.params.integration), request.params.id, { actor: request.adminActor! }),
    );
  };
}
