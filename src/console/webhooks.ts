// Which webhook endpoints a console user may see and act on (docs/console.md, "Webhooks"), and how the
// add-endpoint form becomes the admin API's input. The service team sees every endpoint; a workspace
// owner sees those of their own workspace only: not another workspace's, and not those for every
// workspace, whose address is the service team's receiver (and whose events are every workspace's).
import { AppError } from '../errors.js';
import type { Rules, Workspace } from '../rules/catalog.js';
import type { Store } from '../store/store.js';
import type { WebhookEndpoint } from '../store/repos/webhooks.js';
import {
  EndpointInputSchema,
  SUBSCRIBABLE_TYPES,
  WEBHOOK_PAGE_MAX,
  type EndpointInput,
} from '../webhooks/endpoint-schemas.js';
import { EVENT_SUMMARIES, type EventType } from '../webhooks/catalogue.js';
import type { Viewer } from './users.js';

/** Endpoints a page of the console's list. */
export const WEBHOOKS_PAGE_SIZE = 50;
/** Deliveries a page of an endpoint's log. */
export const DELIVERIES_PAGE_SIZE = 25;
/** Characters of a receiver's answer shown in the log: the first bytes the sender kept, cut shorter still. */
export const ANSWER_HEAD_SHOWN = 200;
/** A checkbox of the form is a field of its own, `type.<event type>`: the form parser keeps one value a name. */
export const TYPE_FIELD_PREFIX = 'type.';

/** The event types the form offers, in the catalogue's order, each with what it tells. */
export const typeChoices = (): { type: string; summary: string }[] =>
  SUBSCRIBABLE_TYPES.map((type) => ({ type, summary: EVENT_SUMMARIES[type as EventType] }));

/** The viewer's own workspace, for a workspace owner; undefined for the service team; null when the rules lost it. */
export function ownWorkspace(rules: Rules, viewer: Viewer): Workspace | null | undefined {
  if (viewer.workspace === null) return undefined;
  return [...rules.workspaces.values()].find((w) => w.slug === viewer.workspace) ?? null;
}

const visibleTo = (rules: Rules, viewer: Viewer) => {
  const own = ownWorkspace(rules, viewer);
  return (e: WebhookEndpoint) => own === undefined || (own !== null && e.workspaceId === own.id);
};

/**
 * A page of the endpoints the viewer may see, by id, after `after`. The repository pages over every
 * endpoint; an owner's page is filled from as many of its pages as it takes (the gateway holds at
 * most WEBHOOK_ENDPOINTS_MAX endpoints, so that is one or two reads).
 */
export async function visibleEndpoints(store: Store, rules: Rules, viewer: Viewer, after: string | undefined) {
  const visible = visibleTo(rules, viewer);
  const items: WebhookEndpoint[] = [];
  let cursor = after ?? null;
  for (;;) {
    const page = await store.readOne((r) => r.webhooks.listEndpoints(cursor, WEBHOOK_PAGE_MAX));
    for (const e of page) if (items.length < WEBHOOKS_PAGE_SIZE + 1 && visible(e)) items.push(e);
    if (items.length > WEBHOOKS_PAGE_SIZE || page.length < WEBHOOK_PAGE_MAX) break;
    cursor = page.at(-1)!.id;
  }
  const shown = items.slice(0, WEBHOOKS_PAGE_SIZE);
  return { items: shown, nextAfter: items.length > WEBHOOKS_PAGE_SIZE ? shown.at(-1)!.id : null };
}

/** The endpoint, if the viewer may see it; another workspace's is a 404 with the words of one that does not exist. */
export async function endpointForViewer(store: Store, rules: Rules, viewer: Viewer, id: string) {
  const endpoint = await store.readOne((r) => r.webhooks.getEndpoint(id));
  if (endpoint === null || !visibleTo(rules, viewer)(endpoint))
    throw new AppError('not-found', `No webhook endpoint ${id}.`);
  return endpoint;
}

const formError = (path: string, message: string) =>
  new AppError('validation-failed', `${path}: ${message}`, { errors: [{ path, message }] });

/**
 * The add-endpoint form as the admin API's input, checked by the API's own schema. An owner's endpoint
 * is always for their own workspace: another named in the form is refused (403), not quietly replaced.
 */
export function endpointInputOf(rules: Rules, viewer: Viewer, fields: Record<string, string>): EndpointInput {
  const types = Object.keys(fields)
    .filter((name) => name.startsWith(TYPE_FIELD_PREFIX))
    .map((name) => name.slice(TYPE_FIELD_PREFIX.length));
  const unknown = types.filter((t) => !SUBSCRIBABLE_TYPES.includes(t));
  if (unknown.length > 0) throw formError('/event_types', `unknown event types: ${unknown.join(', ')}`);
  if (types.length === 0) throw formError('/event_types', 'choose at least one event type');
  const own = ownWorkspace(rules, viewer);
  const asked = fields.workspace?.trim() ?? '';
  let workspace: string | undefined;
  if (own === undefined) workspace = asked === '' ? undefined : asked;
  else if (own === null) throw new AppError('forbidden', `Your workspace ${viewer.workspace} is not in the rules.`);
  else if (asked !== '' && asked !== own.id && asked !== own.slug)
    throw new AppError('forbidden', 'A workspace owner adds endpoints for their own workspace only.');
  else workspace = own.id;
  const description = fields.description?.trim() ?? '';
  const result = EndpointInputSchema.safeParse({
    url: fields.url?.trim() ?? '',
    event_types: types,
    ...(workspace === undefined ? {} : { workspace }),
    ...(description === '' ? {} : { description }),
  });
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  throw formError(`/${issue.path.join('/')}`, issue.message);
}
