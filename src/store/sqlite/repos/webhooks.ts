// Webhook endpoints and the outbox in SQLite: the shared statements (src/store/statements/webhooks.ts),
// the attempts of several deliveries through json_each, and the claim as an update then a read (one
// writer: no other claim runs between them).
import type { WebhookRepo } from '../../repos/webhooks.js';
import {
  attemptValues,
  deliveryValues,
  endpointChanges,
  endpointValues,
  rowToAttempt,
  rowToDelivery,
  rowToEndpoint,
  rowToEvent,
  type AttemptRow,
  type ClaimedRow,
  type DeliveryRow,
  type EndpointRow,
  type EventRow,
} from '../../webhook-rows.js';
import { rowToClaimed } from '../../webhook-claims.js';
import { CLAIM_CHOICE, webhookStatements as shared } from '../../statements/webhooks.js';
import type { Db } from '../connection.js';
import { prepareShared } from '../shared.js';

export function sqliteWebhookRepo(db: Db): WebhookRepo {
  const s = Object.fromEntries(Object.entries(shared).map(([key, sql]) => [key, prepareShared(db, sql)])) as Record<
    keyof typeof shared,
    ReturnType<typeof prepareShared>
  >;
  const attemptsOf = prepareShared<AttemptRow>(db, {
    name: 'webhooks.attemptsOf',
    text: `SELECT * FROM (SELECT a.*, row_number() OVER (PARTITION BY a.delivery_id ORDER BY a.at DESC, a.id DESC) AS n
       FROM webhook_attempts a WHERE a.delivery_id IN (SELECT value FROM json_each($1))) WHERE n <= $2
     ORDER BY delivery_id, at DESC, id DESC`,
  });
  // The claim moves next_attempt_at to the end of its lease (one writer: nothing runs between its
  // choice and its update).
  const claim = prepareShared(db, {
    name: 'webhooks.claim',
    text: `WITH ${CLAIM_CHOICE}
     UPDATE webhook_deliveries SET claimed_by = $1, claimed_until = $2, next_attempt_at = $2, updated_at = $3
     WHERE id IN (SELECT id FROM pick)`,
  });
  return {
    insertEndpoint: async (e) => void s.insertEndpoint.run(...endpointValues(e)),
    getEndpoint: async (id) => {
      const row = s.getEndpoint.get(id) as EndpointRow | undefined;
      return row ? rowToEndpoint(row) : null;
    },
    listEndpoints: async (after, limit) =>
      (s.listEndpoints.all(after ?? '', limit) as EndpointRow[]).map(rowToEndpoint),
    countEndpoints: async (workspaceId) => s.countEndpoints.get(workspaceId) as { total: number; workspace: number },
    updateEndpoint: async (e) => void s.updateEndpoint.run(...endpointChanges(e)),
    deleteEndpoint: async (id) => {
      s.deleteEndpointAttempts.run(id);
      s.deleteEndpointDeliveries.run(id);
      return s.deleteEndpoint.run(id).changes === 1;
    },
    subscribers: async (workspaceId) => (s.subscribers.all(workspaceId) as EndpointRow[]).map(rowToEndpoint),
    insertEvent: async (e) => void s.insertEvent.run(e.id, e.type, e.workspaceId, e.payload, e.createdAt),
    getEvent: async (id) => {
      const row = s.getEvent.get(id) as EventRow | undefined;
      return row ? rowToEvent(row) : null;
    },
    addDelivery: async (d, cap) => {
      s.insertDelivery.run(...deliveryValues(d));
      const dropped = s.dropBeyondCap.run(d.endpointId, cap, d.createdAt).changes;
      if (dropped > 0) s.countDropped.run(d.endpointId, dropped);
      return dropped;
    },
    findDelivery: async (eventId, endpointId) => {
      const row = s.findDelivery.get(eventId, endpointId) as DeliveryRow | undefined;
      return row ? rowToDelivery(row) : null;
    },
    requeue: async (id, at) => void s.requeue.run(id, at),
    listDeliveries: async (endpointId, before, limit) =>
      (s.listDeliveries.all(endpointId, before ?? '~', limit) as DeliveryRow[]).map(rowToDelivery),
    attemptsOf: async (ids, perDelivery) =>
      ids.length === 0 ? [] : attemptsOf.all(JSON.stringify(ids), perDelivery).map(rowToAttempt),
    claimDue: async (now, limit, replicaId, leaseUntil, perEndpoint) => {
      claim.run(replicaId, leaseUntil, now, limit, perEndpoint);
      return (s.claimed.all(replicaId, leaseUntil) as ClaimedRow[]).map((r) => rowToClaimed(r, now));
    },
    recordAttempt: async (a, outcome, replicaId) => {
      s.insertAttempt.run(...attemptValues(a));
      const next = outcome.status === 'pending' ? outcome.nextAttemptAt : null;
      return s.settle.run(a.deliveryId, replicaId, outcome.status, next, a.statusCode, a.error, a.at).changes === 1;
    },
    deliveredSince: async (endpointId, since) => s.deliveredSince.get(endpointId, since) !== undefined,
    backlog: async () => {
      const row = s.backlog.get() as { pending: number; oldest: string | null };
      return { pending: row.pending, oldestCreatedAt: row.oldest };
    },
    deleteEventsBefore: async (before, limit) => {
      s.expireEventAttempts.run(before, limit);
      s.expireEventDeliveries.run(before, limit);
      return s.expireEvents.run(before, limit).changes;
    },
    deleteAttemptsBefore: async (before, limit) => s.expireAttempts.run(before, limit).changes,
  };
}
