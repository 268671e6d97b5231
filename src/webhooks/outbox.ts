// The outbox (docs/webhooks.md, "The outbox guarantee"): an event and its deliveries are written in
// the unit of work of the change that causes it, so an event exists if and only if its change
// committed; senders on any replica claim its deliveries afterwards.
import type { Repos, Store } from '../store/store.js';
import type { ClaimedDelivery, WebhookAttempt, WebhookEvent, AttemptOutcome } from '../store/repos/webhooks.js';
import type { Integration } from '../rules/catalog.js';
import { newId } from '../store/ids.js';
import { envelopeSchema, type EventData, type EventType } from './catalogue.js';

/**
 * Pending deliveries an endpoint keeps: a new one beyond them drops the oldest pending (counted on the
 * endpoint as `dropped_deliveries`), so an endpoint down for long holds a bounded queue.
 */
export const PENDING_DELIVERIES_PER_ENDPOINT_MAX = 1_000;

/** The event's `webhook-id`: `msg_` and a time-ordered id, unique across every replica. */
export const newEventId = (): string => `msg_${newId().replace(/-/g, '')}`;

/** What every event about an integration says of it (catalogue.ts). */
export const aboutIntegration = (integration: Pick<Integration, 'id' | 'handle' | 'name' | 'workspace'>) => ({
  integration: { id: integration.id, handle: integration.handle, name: integration.name },
  workspace_id: integration.workspace.id,
});

export interface WrittenEvent {
  event: WebhookEvent;
  /** The endpoints a delivery was written for. */
  endpointIds: string[];
}

/**
 * Adds a pending delivery of `eventId` to `endpointId`, due at `at`, within the endpoint's cap (the
 * oldest pending dropped beyond it); answers how many were dropped.
 */
export const addDelivery = (tx: Repos, id: string, eventId: string, endpointId: string, at: string): Promise<number> =>
  tx.webhooks.addDelivery(
    {
      id,
      eventId,
      endpointId,
      status: 'pending',
      attempts: 0,
      nextAttemptAt: at,
      lastStatus: null,
      lastError: null,
      claimedBy: null,
      claimedUntil: null,
      createdAt: at,
      updatedAt: at,
    },
    PENDING_DELIVERIES_PER_ENDPOINT_MAX,
  );

/**
 * Writes an event in the caller's unit, with one pending delivery for each endpoint not disabled that
 * takes its type and its workspace (or every workspace); `onlyEndpoint` limits it to that one (a ping).
 * The data is checked against the catalogue: a member it does not list is refused, so nothing the
 * catalogue leaves out (a key, a person's data) can be sent.
 */
export async function writeEvent<T extends EventType>(
  tx: Repos,
  type: T,
  workspaceId: string | null,
  data: EventData<T>,
  at: string,
  onlyEndpoint?: string,
): Promise<WrittenEvent> {
  const body = envelopeSchema(type).parse({ type, timestamp: at, data });
  const event: WebhookEvent = { id: newEventId(), type, workspaceId, payload: JSON.stringify(body), createdAt: at };
  await tx.webhooks.insertEvent(event);
  const endpoints = (await tx.webhooks.subscribers(workspaceId)).filter((e) =>
    onlyEndpoint === undefined ? e.eventTypes.includes(type) : e.id === onlyEndpoint,
  );
  for (const endpoint of endpoints) await addDelivery(tx, newId(), event.id, endpoint.id, at);
  return { event, endpointIds: endpoints.map((e) => e.id) };
}

/**
 * Claims at most `limit` due deliveries for `replicaId` for `leaseMs`, at most `perEndpoint` of one
 * endpoint counting those `replicaId` holds already, in one unit (on PostgreSQL one statement,
 * skipping the rows another replica is claiming): what a sender sends next.
 */
export function claimDue(
  store: Store,
  limit: number,
  replicaId: string,
  leaseMs: number,
  now: Date = new Date(),
  perEndpoint: number = limit,
): Promise<ClaimedDelivery[]> {
  const leaseUntil = new Date(now.getTime() + leaseMs).toISOString();
  return store.transact((tx) => tx.webhooks.claimDue(now.toISOString(), limit, replicaId, leaseUntil, perEndpoint));
}

/** The first bytes of an endpoint's answer the attempts log keeps. */
export const RESPONSE_HEAD_BYTES = 1_024;

/**
 * Logs one attempt of a claimed delivery and moves it as `outcome` says; false when `replicaId` no
 * longer held the claim (its lease ran out and another replica took the delivery over). `then` runs
 * in the same unit, told whether the claim was still held.
 */
export function recordAttempt(
  store: Store,
  attempt: Omit<WebhookAttempt, 'id'>,
  outcome: AttemptOutcome,
  replicaId: string,
  then?: (tx: Repos, settled: boolean) => Promise<void>,
): Promise<boolean> {
  const head =
    attempt.responseHead === null
      ? null
      : Buffer.from(attempt.responseHead).subarray(0, RESPONSE_HEAD_BYTES).toString('utf8');
  return store.transact(async (tx) => {
    const settled = await tx.webhooks.recordAttempt(
      { ...attempt, id: newId(), responseHead: head },
      outcome,
      replicaId,
    );
    await then?.(tx, settled);
    return settled;
  });
}
