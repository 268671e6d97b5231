// The Webhooks pages (docs/console.md, "Webhooks"): the endpoints a user may see, the add-endpoint form,
// an endpoint's page with its actions and delivery log. Every action calls the service the admin API's
// route calls (src/webhooks/endpoints.ts), audited under the signed-in person's name.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError } from '../errors.js';
import type { RulesHolder } from '../rules/loader.js';
import type { Store } from '../store/store.js';
import type { WebhookEndpoint } from '../store/repos/webhooks.js';
import {
  changeEndpoint,
  createEndpoint,
  deleteEndpoint,
  listDeliveries,
  pingEndpoint,
  resendEvent,
  rotateSecret,
} from '../webhooks/endpoints.js';
import { endpointView, EndpointParamsSchema, SECRET_OVERLAP_HOURS } from '../webhooks/endpoint-schemas.js';
import { render } from './pages.js';
import { CONFIRMED } from './schemas.js';
import type { Viewer } from './users.js';
import {
  ANSWER_HEAD_SHOWN,
  DELIVERIES_PAGE_SIZE,
  endpointForViewer,
  endpointInputOf,
  ownWorkspace,
  TYPE_FIELD_PREFIX,
  typeChoices,
  visibleEndpoints,
} from './webhooks.js';

const LIST = '/console/webhooks';
const pageOf = (id: string) => `${LIST}/${encodeURIComponent(id)}`;
/** The list's and the log's cursor: an id, as the admin API's `after`. */
const PageQuerySchema = z.object({ after: z.string().max(100).optional() });

const form = (request: FastifyRequest): Record<string, string> => {
  const body = (request.body ?? {}) as Record<string, unknown>;
  return Object.fromEntries(Object.entries(body).filter((e): e is [string, string] => typeof e[1] === 'string'));
};

/** The form's values kept for the page that shows its refusal. */
const keptForm = (fields: Record<string, string>) => ({
  url: fields.url ?? '',
  description: fields.description ?? '',
  workspace: fields.workspace ?? '',
  types: Object.keys(fields)
    .filter((n) => n.startsWith(TYPE_FIELD_PREFIX))
    .map((n) => n.slice(TYPE_FIELD_PREFIX.length)),
});

export function webhookPages(
  app: FastifyInstance,
  deps: { store: Store; rules: RulesHolder; allowHttpHosts: readonly string[] },
  h: { signedIn(request: FastifyRequest, reply: FastifyReply): Viewer | null },
): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  const workspaceNames = () => new Map([...deps.rules.current().workspaces.values()].map((w) => [w.id, w.name]));

  async function listPage(
    reply: FastifyReply,
    viewer: Viewer,
    after: string | undefined,
    extra: { formError?: string; form?: ReturnType<typeof keptForm> } = {},
  ) {
    const rules = deps.rules.current();
    const page = await visibleEndpoints(deps.store, rules, viewer, after);
    const own = ownWorkspace(rules, viewer);
    return render(reply, 'webhooks', {
      title: 'Webhooks',
      page: { items: page.items.map(endpointView), nextAfter: page.nextAfter },
      workspaces: own === undefined ? [...rules.workspaces.values()] : [],
      own: own ?? null,
      names: workspaceNames(),
      choices: typeChoices(),
      formError: extra.formError ?? null,
      form: extra.form ?? keptForm({}),
    });
  }

  /** The secret, in the answer of the form that made it: never kept anywhere the console could show it again. */
  const secretPage = (reply: FastifyReply, endpoint: { id: string; url: string; secret: string }, rotated: boolean) =>
    render(reply, 'webhook-secret', {
      title: rotated ? 'New signing secret' : 'Endpoint added',
      endpoint,
      rotated,
      overlapHours: SECRET_OVERLAP_HOURS,
    });

  routes.get(LIST, { schema: { hide: true, querystring: PageQuerySchema } }, async (request, reply) => {
    const viewer = h.signedIn(request, reply);
    if (viewer === null) return reply;
    return listPage(reply, viewer, request.query.after);
  });

  routes.post(LIST, { schema: { hide: true } }, async (request, reply) => {
    const viewer = h.signedIn(request, reply)!;
    const fields = form(request);
    try {
      const input = endpointInputOf(deps.rules.current(), viewer, fields);
      const created = await createEndpoint(deps, input, viewer.name);
      return secretPage(reply.code(201), created, false);
    } catch (error) {
      // A form the API's rules refuse (a non-https URL, an unknown type, the cap) is shown on the form.
      if (!(error instanceof AppError) || (error.code !== 'validation-failed' && error.code !== 'limit-reached'))
        throw error;
      return listPage(reply.code(error.status), viewer, undefined, {
        formError: error.message,
        form: keptForm(fields),
      });
    }
  });

  /** The viewer and the endpoint of a path, or the 404 that another workspace's endpoint gets too. */
  async function target(request: FastifyRequest, reply: FastifyReply, id: string) {
    const viewer = h.signedIn(request, reply);
    if (viewer === null) return null;
    const endpoint = await endpointForViewer(deps.store, deps.rules.current(), viewer, id);
    return { viewer, endpoint };
  }

  routes.get(
    `${LIST}/:id`,
    { schema: { hide: true, params: EndpointParamsSchema, querystring: PageQuerySchema } },
    async (request, reply) => {
      const found = await target(request, reply, request.params.id);
      if (found === null) return reply;
      const log = await listDeliveries(deps, found.endpoint.id, DELIVERIES_PAGE_SIZE, request.query.after);
      return render(reply, 'webhook', {
        title: `Webhook endpoint ${found.endpoint.id}`,
        endpoint: endpointView(found.endpoint),
        names: workspaceNames(),
        log,
        headShown: ANSWER_HEAD_SHOWN,
      });
    },
  );

  /** An action on one endpoint, answered with a redirect to its page (POST, redirect, GET). */
  function act(
    path: string,
    run: (viewer: Viewer, endpoint: WebhookEndpoint, fields: Record<string, string>) => Promise<unknown>,
  ) {
    routes.post(
      `${LIST}/:id/${path}`,
      { schema: { hide: true, params: EndpointParamsSchema } },
      async (request, reply) => {
        const { viewer, endpoint } = (await target(request, reply, request.params.id))!;
        await run(viewer, endpoint, form(request));
        return reply.redirect(pageOf(endpoint.id), 303);
      },
    );
  }

  act('pause', (viewer, e) => changeEndpoint(deps, e.id, { paused: true }, viewer.name));
  act('resume', (viewer, e) => changeEndpoint(deps, e.id, { paused: false }, viewer.name));
  act('ping', (viewer, e) => pingEndpoint(deps, e.id, viewer.name));
  act('resend', async (viewer, e, fields) => {
    // Only an event this endpoint was sent: an owner cannot have another workspace's event sent to theirs.
    const event = fields.event ?? '';
    const delivery = await deps.store.readOne((r) => r.webhooks.findDelivery(event, e.id));
    if (delivery === null) throw new AppError('not-found', `No delivery of event ${event} to this endpoint.`);
    await resendEvent(deps, event, e.id, viewer.name);
  });

  routes.post(
    `${LIST}/:id/rotate`,
    { schema: { hide: true, params: EndpointParamsSchema } },
    async (request, reply) => {
      const { viewer, endpoint } = (await target(request, reply, request.params.id))!;
      return secretPage(reply, await rotateSecret(deps, endpoint.id, viewer.name), true);
    },
  );

  // Deleting cannot be taken back: the form first answers with a page naming what goes, whose button
  // sends it again with confirm=yes (checked here, so it holds without script).
  routes.post(
    `${LIST}/:id/delete`,
    { schema: { hide: true, params: EndpointParamsSchema } },
    async (request, reply) => {
      const { viewer, endpoint } = (await target(request, reply, request.params.id))!;
      if (form(request).confirm !== CONFIRMED)
        return render(reply, 'webhook-delete', { title: 'Delete this endpoint?', endpoint: endpointView(endpoint) });
      await deleteEndpoint(deps, endpoint.id, viewer.name);
      return reply.redirect(LIST, 303);
    },
  );
}
