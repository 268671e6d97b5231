// Admin API for an integration's scheduled switch-off (docs/runbook.md, "The scheduled switch-off"):
// schedule (or replace), read, cancel. Each change is audited under the credential's operator.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { AppError } from '../errors.js';
import {
  cancelScheduledSwitchOff,
  scheduleSwitchOff,
  ScheduleInputSchema,
  scheduleView,
  ScheduleViewSchema,
} from '../migration/schedule.js';
import { adminAuthenticator } from './authenticate.js';
import { integrationByRef } from './integration-ref.js';
import { IntegrationParamsSchema } from './schemas.js';
import type { AdminRoutesDeps } from './migration-routes.js';

const meta = { tags: ['admin'], security: [{ adminBearer: [] }] };
const params = IntegrationParamsSchema;
const PATH = '/admin/v1/integrations/:integration/switch-off/schedule';

export function scheduleRoutes(deps: AdminRoutesDeps) {
  const find = (ref: string) => integrationByRef(deps.rules, ref);
  return async function register(app: FastifyInstance): Promise<void> {
    const r = app.withTypeProvider<ZodTypeProvider>();
    r.addHook('onRequest', adminAuthenticator(deps));

    r.put(
      PATH,
      {
        schema: {
          ...meta,
          summary: 'Schedule the switch-off (replacing a schedule it had): carried out at `at` if ready, or forced',
          params,
          body: ScheduleInputSchema,
          response: { 200: ScheduleViewSchema },
          problems: ['not-found', 'conflict', 'validation-failed'],
        },
      },
      async (request) =>
        scheduleSwitchOff(deps, find(request.params.integration), { ...request.body, actor: request.adminActor! }),
    );

    r.get(
      PATH,
      {
        schema: {
          ...meta,
          summary: "The integration's schedule, pending or how it ended; 404 when it never had one",
          params,
          response: { 200: ScheduleViewSchema },
          problems: ['not-found'],
        },
      },
      async (request) => {
        const integration = find(request.params.integration);
        const schedule = await deps.store.readOne((r) => r.schedules.get(integration.id));
        if (!schedule) throw new AppError('not-found', `${integration.handle} has no scheduled switch-off.`);
        return scheduleView(schedule);
      },
    );

    r.delete(
      PATH,
      {
        schema: {
          ...meta,
          summary: 'Cancel the pending schedule',
          params,
          response: { 200: ScheduleViewSchema },
          problems: ['not-found'],
        },
      },
      async (request) =>
        cancelScheduledSwitchOff(deps, find(request.params.integration), { actor: request.adminActor! }),
    );
  };
}
