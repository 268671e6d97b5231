// Admin API of webhook endpoints (docs/webhooks.md): subscribe, list, read, change, rotate the secret,
// delete, ping, the delivery log, resend an event. Each change is audited under the credential's operator.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError } from '../errors.js';
import {
  changeEndpoint,
  createEndpoint,
  deleteEndpoint,
  listDeliveries,
  pingEndpoint,
  resendEvent,
  rotateSecret,
} from '../webhooks/endpoints.js';
import {
  DeliveryPageSchema,
  EndpointInputSchema,
  EndpointPageSchema,
  EndpointParamsSchema,
  EndpointPatchSchema,
  EndpointViewSchema,
  EndpointWithSecretSchema,
  endpointView,
  EventWrittenSchema,
  PageQuerySchema,
  ResendQuerySchema,
} from '../webhooks/endpoint-schemas.js';
import { adminAuthenticator } from './authenticate.js';
import type { AdminRoutesDeps } from './migration-routes.js';

const meta = { tags: ['admin'], security: [{ adminBearer: [] }] };
const BASE = '/admin/v1/webhooks/endpoints';
const params = EndpointParamsSchema;

export function webhookRoutes(deps: AdminRoutesDeps & { allowHttpHosts: readonly string[] }) {
  return async function register(app: FastifyInstance): Promise<void> {
    const r = app.withTypeProvider<ZodTypeProvider>();
    r.addHook('onRequest', adminAuthenticator(deps));

    r.post(
      BASE,
      {
        schema: {
          ...meta,
          summary: 'Subscribe an endpoint to event types; its signing secret is shown in this answer only',
          body: EndpointInputSchema,
          response: { 201: EndpointWithSecretSchema },
          problems: ['validation-failed', 'limit-reached'],
        },
      },
      async (request, reply) => reply.code(201).send(await createEndpoint(deps, request.body, request.adminActor!)),
    );

    r.get(
      BASE,
      {
        schema: {
          ...meta,
          summary: 'The webhook endpoints, by id, a page at a time (no secret)',
          querystring: PageQuerySchema,
          response: { 200: EndpointPageSchema },
          problems: ['bad-request'],
        },
      },
      async (request) => {
        const { limit, after } = request.query;
        const page = await deps.store.readOne((s) => s.webhooks.listEndpoints(after ?? null, limit));
        return { items: page.map(endpointView), next_after: page.length === limit ? page.at(-1)!.id : null };
      },
    );

    r.get(
      `${BASE}/:id`,
      {
        schema: {
          ...meta,
          summary: 'One webhook endpoint (no secret)',
          params,
          response: { 200: EndpointViewSchema },
          problems: ['not-found'],
        },
      },
      async (request) => {
        const endpoint = await deps.store.readOne((s) => s.webhooks.getEndpoint(request.params.id));
        if (!endpoint) throw new AppError('not-found', `No webhook endpoint ${request.params.id}.`);
        return endpointView(endpoint);
      },
    );

    r.patch(
      `${BASE}/:id`,
      {
        schema: {
          ...meta,
          summary: "Change an endpoint's event types or description, or pause and resume it",
          params,
          body: EndpointPatchSchema,
          response: { 200: EndpointViewSchema },
          problems: ['not-found', 'validation-failed'],
        },
      },
      async (request) => changeEndpoint(deps, request.params.id, request.body, request.adminActor!),
    );

    r.post(
      `${BASE}/:id/rotate-secret`,
      {
        schema: {
          ...meta,
          summary: 'A new signing secret, shown in this answer only; the previous one signs beside it for 24 h',
          params,
          response: { 200: EndpointWithSecretSchema },
          problems: ['not-found'],
        },
      },
      async (request) => rotateSecret(deps, request.params.id, request.adminActor!),
    );

    r.delete(
      `${BASE}/:id`,
      {
        schema: {
          ...meta,
          summary: 'Delete an endpoint with its deliveries and their attempts',
          params,
          response: { 204: z.null() },
          problems: ['not-found'],
        },
      },
      async (request, reply) => {
        await deleteEndpoint(deps, request.params.id, request.adminActor!);
        return reply.code(204).send(null);
      },
    );

    r.post(
      `${BASE}/:id/ping`,
      {
        schema: {
          ...meta,
          summary: 'Write a `ping` event for this endpoint alone (delivery_id null: the endpoint is disabled)',
          params,
          response: { 202: EventWrittenSchema },
          problems: ['not-found'],
        },
      },
      async (request, reply) => reply.code(202).send(await pingEndpoint(deps, request.params.id, request.adminActor!)),
    );

    r.get(
      `${BASE}/:id/deliveries`,
      {
        schema: {
          ...meta,
          summary: "The endpoint's deliveries, newest first, each with its newest attempts",
          params,
          querystring: PageQuerySchema,
          response: { 200: DeliveryPageSchema },
          problems: ['not-found', 'bad-request'],
        },
      },
      async (request) => listDeliveries(deps, request.params.id, request.query.limit, request.query.after),
    );

    r.post(
      '/admin/v1/webhooks/events/:id/resend',
      {
        schema: {
          ...meta,
          summary: 'Send an event again to one endpoint (its delivery made pending anew)',
          params,
          querystring: ResendQuerySchema,
          response: { 202: EventWrittenSchema },
          problems: ['not-found', 'bad-request'],
        },
      },
      async (request, reply) =>
        reply.code(202).send(await resendEvent(deps, request.params.id, request.query.endpoint, request.adminActor!)),
    );
  };
}
