// The service team's webhook endpoints (docs/webhooks.md): subscribe, change, pause, rotate the secret,
// delete, ping, read the delivery log, resend an event. Each change is one unit with its audit entry
// (its subject, `integration_id`, is the endpoint's id; GET /admin/v1/audit lists them); the secret
// is never audited.
import { randomBytes } from 'node:crypto';
import { AppError } from '../errors.js';
import type { RulesHolder } from '../rules/loader.js';
import type { Repos, Store } from '../store/store.js';
import type { WebhookEndpoint } from '../store/repos/webhooks.js';
import { newId } from '../store/ids.js';
import { addDelivery, writeEvent } from './outbox.js';
import {
  ATTEMPTS_SHOWN_PER_DELIVERY,
  deliveryView,
  endpointView,
  SECRET_OVERLAP_HOURS,
  WEBHOOK_ENDPOINTS_MAX,
  WEBHOOK_ENDPOINTS_PER_WORKSPACE_MAX,
  type EndpointInput,
  type EndpointPatch,
} from './endpoint-schemas.js';
import { checkEndpointUrl } from './url.js';

export interface WebhookDeps {
  store: Store;
  rules: RulesHolder;
  /** Hosts an endpoint may be reached at over plain http (WEBHOOK_ALLOW_HTTP_HOSTS). */
  allowHttpHosts: readonly string[];
  now?: () => Date;
}

/** A Standard Webhooks secret: `whsec_` and 32 random bytes in base64. */
const newSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

const invalid = (path: string, message: string) =>
  new AppError('validation-failed', `${path}: ${message}`, { errors: [{ path, message }] });

/** An endpoint's audit entry, its subject the endpoint's id. */
export const auditEndpoint = (
  tx: Repos,
  endpointId: string,
  action: string,
  actor: string,
  at: string,
  details: Record<string, unknown>,
) =>
  tx.states.addAudit({
    id: newId(),
    integrationId: endpointId,
    action,
    fromState: null,
    toState: null,
    actor,
    reason: null,
    details: { endpoint_id: endpointId, ...details },
    at,
  });

const found = async (tx: Repos, id: string): Promise<WebhookEndpoint> => {
  const endpoint = await tx.webhooks.getEndpoint(id);
  if (!endpoint) throw new AppError('not-found', `No webhook endpoint ${id}.`);
  return endpoint;
};

/** A workspace named by id or slug, or a 422 naming it. */
function workspaceId(rules: RulesHolder, ref: string): string {
  const catalog = rules.current();
  const workspace = catalog.workspaces.get(ref) ?? [...catalog.workspaces.values()].find((w) => w.slug === ref);
  if (!workspace) throw invalid('/workspace', `no workspace ${JSON.stringify(ref)} in the rules`);
  return workspace.id;
}

export async function createEndpoint(deps: WebhookDeps, input: EndpointInput, actor: string) {
  const url = checkEndpointUrl(input.url, deps.allowHttpHosts);
  const workspace = input.workspace === undefined ? null : workspaceId(deps.rules, input.workspace);
  const at = (deps.now?.() ?? new Date()).toISOString();
  const endpoint: WebhookEndpoint = {
    id: newId(),
    url,
    eventTypes: [...new Set(input.event_types)],
    workspaceId: workspace,
    description: input.description ?? null,
    secret: newSecret(),
    previousSecret: null,
    previousSecretUntil: null,
    paused: false,
    disabledAt: null,
    disabledReason: null,
    droppedDeliveries: 0,
    createdBy: actor,
    createdAt: at,
    updatedAt: at,
  };
  await deps.store.transact(async (tx) => {
    await tx.locks.webhookEndpoints();
    const counts = await tx.webhooks.countEndpoints(workspace);
    if (counts.total >= WEBHOOK_ENDPOINTS_MAX)
      throw new AppError('limit-reached', `The gateway holds ${WEBHOOK_ENDPOINTS_MAX} webhook endpoints, its cap.`, {
        limit: WEBHOOK_ENDPOINTS_MAX,
      });
    if (counts.workspace >= WEBHOOK_ENDPOINTS_PER_WORKSPACE_MAX)
      throw new AppError(
        'limit-reached',
        `${workspace === null ? 'Every workspace has' : `Workspace ${workspace} has`} ${WEBHOOK_ENDPOINTS_PER_WORKSPACE_MAX} webhook endpoints, its cap.`,
        { limit: WEBHOOK_ENDPOINTS_PER_WORKSPACE_MAX },
      );
    await tx.webhooks.insertEndpoint(endpoint);
    await auditEndpoint(tx, endpoint.id, 'webhook_endpoint_created', actor, at, {
      host: new URL(url).host,
      event_types: endpoint.eventTypes,
      workspace_id: workspace,
    });
  });
  return { ...endpointView(endpoint), secret: endpoint.secret };
}

export async function changeEndpoint(deps: WebhookDeps, id: string, patch: EndpointPatch, actor: string) {
  const at = (deps.now?.() ?? new Date()).toISOString();
  return deps.store.transact(async (tx) => {
    await tx.locks.webhookEndpoints();
    const before = await found(tx, id);
    const after: WebhookEndpoint = {
      ...before,
      ...(patch.event_types === undefined ? {} : { eventTypes: [...new Set(patch.event_types)] }),
      ...(patch.description === undefined ? {} : { description: patch.description }),
      ...(patch.paused === undefined ? {} : { paused: patch.paused }),
      ...(patch.enabled === undefined ? {} : { disabledAt: null, disabledReason: null }),
      updatedAt: at,
    };
    await tx.webhooks.updateEndpoint(after);
    await auditEndpoint(tx, id, 'webhook_endpoint_changed', actor, at, {
      ...(patch.event_types === undefined ? {} : { event_types: after.eventTypes }),
      ...(patch.description === undefined ? {} : { description_changed: true }),
      ...(patch.paused === undefined ? {} : { paused: after.paused }),
      ...(patch.enabled === undefined ? {} : { enabled: true, was_disabled_at: before.disabledAt }),
    });
    return endpointView(after);
  });
}

/** A new secret, shown once; the one before keeps signing beside it for SECRET_OVERLAP_HOURS. */
export async function rotateSecret(deps: WebhookDeps, id: string, actor: string) {
  const now = deps.now?.() ?? new Date();
  const at = now.toISOString();
  return deps.store.transact(async (tx) => {
    await tx.locks.webhookEndpoints();
    const before = await found(tx, id);
    const until = new Date(now.getTime() + SECRET_OVERLAP_HOURS * 3_600_000).toISOString();
    const after: WebhookEndpoint = {
      ...before,
      secret: newSecret(),
      previousSecret: before.secret,
      previousSecretUntil: until,
      updatedAt: at,
    };
    await tx.webhooks.updateEndpoint(after);
    await auditEndpoint(tx, id, 'webhook_secret_rotated', actor, at, { previous_secret_until: until });
    return { ...endpointView(after), secret: after.secret };
  });
}

export async function deleteEndpoint(deps: WebhookDeps, id: string, actor: string) {
  const at = (deps.now?.() ?? new Date()).toISOString();
  await deps.store.transact(async (tx) => {
    await tx.locks.webhookEndpoints();
    const endpoint = await found(tx, id);
    await tx.webhooks.deleteEndpoint(id);
    await auditEndpoint(tx, id, 'webhook_endpoint_deleted', actor, at, { host: new URL(endpoint.url).host });
  });
}

/** A `ping` event for this endpoint alone. */
export async function pingEndpoint(deps: WebhookDeps, id: string, actor: string) {
  const at = (deps.now?.() ?? new Date()).toISOString();
  return deps.store.transact(async (tx) => {
    const endpoint = await found(tx, id);
    const written = await writeEvent(tx, 'ping', endpoint.workspaceId, { endpoint_id: id, actor }, at, id);
    const delivery = written.endpointIds.length > 0 ? await tx.webhooks.findDelivery(written.event.id, id) : null;
    await auditEndpoint(tx, id, 'webhook_ping_sent', actor, at, { event_id: written.event.id });
    return { event_id: written.event.id, delivery_id: delivery?.id ?? null };
  });
}

/** The endpoint's deliveries, newest first, each with its newest attempts. */
export async function listDeliveries(deps: WebhookDeps, id: string, limit: number, after: string | undefined) {
  return deps.store.snapshot(async (r) => {
    const endpoint = await r.webhooks.getEndpoint(id);
    if (!endpoint) throw new AppError('not-found', `No webhook endpoint ${id}.`);
    const deliveries = await r.webhooks.listDeliveries(id, after ?? null, limit);
    const attempts = await r.webhooks.attemptsOf(
      deliveries.map((d) => d.id),
      ATTEMPTS_SHOWN_PER_DELIVERY,
    );
    return {
      items: deliveries.map((d) =>
        deliveryView(
          d,
          attempts.filter((a) => a.deliveryId === d.id),
        ),
      ),
      next_after: deliveries.length === limit ? deliveries.at(-1)!.id : null,
    };
  });
}

/** Sends an event again to one endpoint: its delivery made pending anew, or made if it had none. */
export async function resendEvent(deps: WebhookDeps, eventId: string, endpointId: string, actor: string) {
  const at = (deps.now?.() ?? new Date()).toISOString();
  return deps.store.transact(async (tx) => {
    const event = await tx.webhooks.getEvent(eventId);
    if (!event) throw new AppError('not-found', `No event ${eventId} (events are kept for the retention period).`);
    await found(tx, endpointId);
    const delivery = await tx.webhooks.findDelivery(eventId, endpointId);
    const deliveryId = delivery?.id ?? newId();
    if (delivery) await tx.webhooks.requeue(delivery.id, at);
    else await addDelivery(tx, deliveryId, eventId, endpointId, at);
    await auditEndpoint(tx, endpointId, 'webhook_event_resent', actor, at, {
      event_id: eventId,
      delivery_id: deliveryId,
    });
    return { event_id: eventId, delivery_id: deliveryId };
  });
}
