// Webhook endpoints and the outbox in PostgreSQL: the shared statements (src/store/statements/webhooks.ts),
// the attempts of several deliveries as an array parameter, and the claim as one statement that skips
// the rows another replica is claiming.
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
import { sharedStatement, statement, type Sql } from '../sql.js';

const s = {
  insertEndpoint: sharedStatement(shared.insertEndpoint),
  getEndpoint: sharedStatement<EndpointRow>(shared.getEndpoint),
  listEndpoints: sharedStatement<EndpointRow>(shared.listEndpoints),
  countEndpoints: sharedStatement<{ total: number; workspace: number }>(shared.countEndpoints),
  updateEndpoint: sharedStatement(shared.updateEndpoint),
  deleteEndpointAttempts: sharedStatement(shared.deleteEndpointAttempts),
  deleteEndpointDeliveries: sharedStatement(shared.deleteEndpointDeliveries),
  deleteEndpoint: sharedStatement(shared.deleteEndpoint),
  subscribers: sharedStatement<EndpointRow>(shared.subscribers),
  insertEvent: sharedStatement(shared.insertEvent),
  getEvent: sharedStatement<EventRow>(shared.getEvent),
  insertDelivery: sharedStatement(shared.insertDelivery),
  dropBeyondCap: sharedStatement(shared.dropBeyondCap),
  countDropped: sharedStatement(shared.countDropped),
  findDelivery: sharedStatement<DeliveryRow>(shared.findDelivery),
  requeue: sharedStatement(shared.requeue),
  listDeliveries: sharedStatement<DeliveryRow>(shared.listDeliveries),
  deliveredSince: sharedStatement(shared.deliveredSince),
  backlog: sharedStatement<{ pending: number; oldest: string | null }>(shared.backlog),
  insertAttempt: sharedStatement(shared.insertAttempt),
  settle: sharedStatement(shared.settle),
  expireEventAttempts: sharedStatement(shared.expireEventAttempts),
  expireEventDeliveries: sharedStatement(shared.expireEventDeliveries),
  expireEvents: sharedStatement(shared.expireEvents),
  expireAttempts: sharedStatement(shared.expireAttempts),
};

const attemptsOf = statement<AttemptRow>(
  'webhooks.attemptsOf',
  `SELECT * FROM (SELECT a.*, row_number() OVER (PARTITION BY a.delivery_id ORDER BY a.at DESC, a.id DESC) AS n
     FROM webhook_attempts a WHERE a.delivery_id = ANY ($1::text[])) t WHERE n <= $2
   ORDER BY delivery_id, at DESC, id DESC`,
);

// SKIP LOCKED passes over the rows another replica's claim holds, so of two replicas claiming at once
// each gets its own; a row that other claim committed meanwhile is looked at again once locked, and
// is no longer due. The claim moves next_attempt_at to the end of its lease: a claim whose replica
// died comes due again then.
const claim = statement<ClaimedRow>(
  'webhooks.claim',
  `WITH ${CLAIM_CHOICE},
   due AS (
     SELECT d.id FROM webhook_deliveries d
     WHERE d.id IN (SELECT id FROM pick) AND d.status = 'pending' AND d.next_attempt_at <= $3
     FOR UPDATE OF d SKIP LOCKED)
   UPDATE webhook_deliveries d SET claimed_by = $1, claimed_until = $2, next_attempt_at = $2, updated_at = $3
   FROM due, webhook_events e, webhook_endpoints p
   WHERE d.id = due.id AND e.id = d.event_id AND p.id = d.endpoint_id
   RETURNING d.*, e.type, e.workspace_id, e.payload, e.created_at AS event_created_at, p.url, p.secret,
     p.previous_secret, p.previous_secret_until`,
);

export function pgWebhookRepo(sql: Sql): WebhookRepo {
  return {
    insertEndpoint: async (e) => void (await s.insertEndpoint.run(sql, ...endpointValues(e))),
    getEndpoint: async (id) => {
      const row = await s.getEndpoint.one(sql, id);
      return row ? rowToEndpoint(row) : null;
    },
    listEndpoints: async (after, limit) => (await s.listEndpoints.rows(sql, after ?? '', limit)).map(rowToEndpoint),
    countEndpoints: async (workspaceId) => (await s.countEndpoints.one(sql, workspaceId))!,
    updateEndpoint: async (e) => void (await s.updateEndpoint.run(sql, ...endpointChanges(e))),
    deleteEndpoint: async (id) => {
      await s.deleteEndpointAttempts.run(sql, id);
      await s.deleteEndpointDeliveries.run(sql, id);
      return (await s.deleteEndpoint.run(sql, id)).rowCount === 1;
    },
    subscribers: async (workspaceId) => (await s.subscribers.rows(sql, workspaceId)).map(rowToEndpoint),
    insertEvent: async (e) => void (await s.insertEvent.run(sql, e.id, e.type, e.workspaceId, e.payload, e.createdAt)),
    getEvent: async (id) => {
      const row = await s.getEvent.one(sql, id);
      return row ? rowToEvent(row) : null;
    },
    addDelivery: async (d, cap) => {
      await s.insertDelivery.run(sql, ...deliveryValues(d));
      const dropped = (await s.dropBeyondCap.run(sql, d.endpointId, cap, d.createdAt)).rowCount ?? 0;
      if (dropped > 0) await s.countDropped.run(sql, d.endpointId, dropped);
      return dropped;
    },
    findDelivery: async (eventId, endpointId) => {
      const row = await s.findDelivery.one(sql, eventId, endpointId);
      return row ? rowToDelivery(row) : null;
    },
    requeue: async (id, at) => void (await s.requeue.run(sql, id, at)),
    listDeliveries: async (endpointId, before, limit) =>
      (await s.listDeliveries.rows(sql, endpointId, before ?? '~', limit)).map(rowToDelivery),
    attemptsOf: async (ids, perDelivery) =>
      ids.length === 0 ? [] : (await attemptsOf.rows(sql, ids, perDelivery)).map(rowToAttempt),
    claimDue: async (now, limit, replicaId, leaseUntil, perEndpoint) =>
      (await claim.rows(sql, replicaId, leaseUntil, now, limit, perEndpoint))
        .sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : 1))
        .map((r) => rowToClaimed(r, now)),
    recordAttempt: async (a, outcome, replicaId) => {
      await s.insertAttempt.run(sql, ...attemptValues(a));
      const next = outcome.status === 'pending' ? outcome.nextAttemptAt : null;
      const settled = await s.settle.run(
        sql,
        a.deliveryId,
        replicaId,
        outcome.status,
        next,
        a.statusCode,
        a.error,
        a.at,
      );
      return settled.rowCount === 1;
    },
    deliveredSince: async (endpointId, since) => (await s.deliveredSince.one(sql, endpointId, since)) !== null,
    backlog: async () => {
      const row = (await s.backlog.one(sql))!;
      return { pending: row.pending, oldestCreatedAt: row.oldest };
    },
    deleteEventsBefore: async (before, limit) => {
      await s.expireEventAttempts.run(sql, before, limit);
      await s.expireEventDeliveries.run(sql, before, limit);
      return (await s.expireEvents.run(sql, before, limit)).rowCount ?? 0;
    },
    deleteAttemptsBefore: async (before, limit) => (await s.expireAttempts.run(sql, before, limit)).rowCount ?? 0,
  };
}
