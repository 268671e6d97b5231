// The webhook commands' two targets (src/cli/webhooks.ts): the admin API's service functions on the
// database, or a running gateway's admin API (/admin/v1/webhooks). Both answer the admin API's views.
import type { z } from 'zod';
import { ConfigSchema } from '../config.js';
import {
  changeEndpoint,
  createEndpoint,
  deleteEndpoint,
  listDeliveries,
  pingEndpoint,
  rotateSecret,
} from '../webhooks/endpoints.js';
import {
  endpointView,
  type DeliveryPageSchema,
  type EndpointInput,
  type EndpointPageSchema,
  type EndpointPatch,
  type EndpointViewSchema,
  type EndpointWithSecretSchema,
  type EventWrittenSchema,
} from '../webhooks/endpoint-schemas.js';
import type { AdminClient } from './admin-client.js';
import type { Context } from './database-backend.js';
import { EnvironmentError } from './exit.js';

export type EndpointView = z.infer<typeof EndpointViewSchema>;
export type EndpointWithSecret = z.infer<typeof EndpointWithSecretSchema>;
export type EndpointPage = z.infer<typeof EndpointPageSchema>;
export type DeliveryPage = z.infer<typeof DeliveryPageSchema>;
export type EventWritten = z.infer<typeof EventWrittenSchema>;
export interface Page {
  limit: number;
  after?: string;
}

export interface WebhookBackend {
  list(page: Page): Promise<EndpointPage>;
  create(input: EndpointInput): Promise<EndpointWithSecret>;
  change(id: string, patch: EndpointPatch): Promise<EndpointView>;
  rotate(id: string): Promise<EndpointWithSecret>;
  ping(id: string): Promise<EventWritten>;
  deliveries(id: string, page: Page): Promise<DeliveryPage>;
  remove(id: string): Promise<void>;
}

/** WEBHOOK_ALLOW_HTTP_HOSTS read as the server reads it: the CLI on the database allows what the gateway does. */
export function allowHttpHostsFrom(env: Record<string, string | undefined>): string[] {
  const parsed = ConfigSchema.shape.WEBHOOK_ALLOW_HTTP_HOSTS.safeParse(env.WEBHOOK_ALLOW_HTTP_HOSTS);
  if (!parsed.success) throw new EnvironmentError(`WEBHOOK_ALLOW_HTTP_HOSTS ${parsed.error.issues[0]!.message}`);
  return parsed.data ?? [];
}

/** `allowHttpHosts` is read when an endpoint is added: a bad value fails that command, not every other. */
export function databaseWebhooks(ctx: Context, actor: string, allowHttpHosts: () => readonly string[]): WebhookBackend {
  const deps = { store: ctx.store, rules: ctx.rules, allowHttpHosts: [] as readonly string[] };
  return {
    async list({ limit, after }) {
      // As the admin API's GET .../endpoints answers it.
      const page = await ctx.store.readOne((s) => s.webhooks.listEndpoints(after ?? null, limit));
      return { items: page.map(endpointView), next_after: page.length === limit ? page.at(-1)!.id : null };
    },
    create: (input) => createEndpoint({ ...deps, allowHttpHosts: allowHttpHosts() }, input, actor),
    change: (id, patch) => changeEndpoint(deps, id, patch, actor),
    rotate: (id) => rotateSecret(deps, id, actor),
    ping: (id) => pingEndpoint(deps, id, actor),
    deliveries: (id, { limit, after }) => listDeliveries(deps, id, limit, after),
    remove: (id) => deleteEndpoint(deps, id, actor),
  };
}

export function apiWebhooks(client: AdminClient): WebhookBackend {
  const of = (id: string) => `/webhooks/endpoints/${encodeURIComponent(id)}`;
  return {
    list: (page) => client.get<EndpointPage>('/webhooks/endpoints', { limit: page.limit, after: page.after }),
    create: (input) => client.post<EndpointWithSecret>('/webhooks/endpoints', input),
    change: (id, patch) => client.patch<EndpointView>(of(id), patch),
    rotate: (id) => client.post<EndpointWithSecret>(`${of(id)}/rotate-secret`, {}),
    ping: (id) => client.post<EventWritten>(`${of(id)}/ping`, {}),
    deliveries: (id, page) =>
      client.get<DeliveryPage>(`${of(id)}/deliveries`, { limit: page.limit, after: page.after }),
    remove: async (id) => {
      await client.delete<null>(of(id), undefined);
    },
  };
}
