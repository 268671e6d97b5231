// Outgoing events (docs/webhooks.md): the endpoints subscribed to them, the outbox of events written in
// the unit of the change that caused them, one delivery per event and endpoint, and each attempt's log.

export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'dropped';

export interface WebhookEndpoint {
  id: string;
  url: string;
  /** The catalogue's event types it is sent (src/webhooks/catalogue.ts). */
  eventTypes: string[];
  /** Events of this workspace only; null: of every workspace. */
  workspaceId: string | null;
  description: string | null;
  /** Signs every delivery (`whsec_…`): kept as it is, since an HMAC needs the secret itself. */
  secret: string;
  /** The secret before the last rotation, still signing beside the new one until `previousSecretUntil`. */
  previousSecret: string | null;
  previousSecretUntil: string | null;
  /** Deliveries are still written, none is sent until it is resumed. */
  paused: boolean;
  /** No delivery is written to a disabled endpoint. */
  disabledAt: string | null;
  disabledReason: string | null;
  /** Pending deliveries dropped, the oldest first, to keep the endpoint's queue within its cap. */
  droppedDeliveries: number;
  createdBy: string;
  createdAt: string;
  updatedAt: string;
}

export interface WebhookEvent {
  /** The `webhook-id` (`msg_…`): the same on every attempt and every endpoint, for de-duplication. */
  id: string;
  type: string;
  workspaceId: string | null;
  /** The JSON body sent, as text: the bytes signed are the bytes resent. */
  payload: string;
  createdAt: string;
}

export interface WebhookDelivery {
  id: string;
  eventId: string;
  endpointId: string;
  status: DeliveryStatus;
  attempts: number;
  /** When it is due (pending); a claim moves it to the end of its lease. */
  nextAttemptAt: string;
  lastStatus: number | null;
  lastError: string | null;
  claimedBy: string | null;
  claimedUntil: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface WebhookAttempt {
  id: string;
  deliveryId: string;
  at: string;
  /** The endpoint's HTTP status; null when none came (a timeout, a refused connection). */
  statusCode: number | null;
  durationMs: number;
  /** The first bytes of the endpoint's answer, as text. */
  responseHead: string | null;
  error: string | null;
}

/** A delivery claimed for sending: what a sender needs, the secrets that sign it included. */
export interface ClaimedDelivery {
  delivery: WebhookDelivery;
  event: WebhookEvent;
  url: string;
  /** The current secret first, then the previous one while its overlap lasts. */
  secrets: string[];
}

/** How an attempt leaves its delivery: sent, given up, or due again at `nextAttemptAt`. */
export type AttemptOutcome = { status: 'delivered' | 'failed' } | { status: 'pending'; nextAttemptAt: string };

export interface WebhookRepo {
  insertEndpoint(endpoint: WebhookEndpoint): Promise<void>;
  getEndpoint(id: string): Promise<WebhookEndpoint | null>;
  /** Every endpoint, by id, the first `limit` after `after`. */
  listEndpoints(after: string | null, limit: number): Promise<WebhookEndpoint[]>;
  /** Endpoints in all, and those of `workspaceId` (the endpoints for every workspace when null). */
  countEndpoints(workspaceId: string | null): Promise<{ total: number; workspace: number }>;
  /** Writes the endpoint's changeable columns (types, description, paused, secrets, disabled). */
  updateEndpoint(endpoint: WebhookEndpoint): Promise<void>;
  /** Deletes the endpoint with its deliveries and their attempts; false when there was none. */
  deleteEndpoint(id: string): Promise<boolean>;
  /** Endpoints not disabled that receive events of `workspaceId`: its own and those for every workspace. */
  subscribers(workspaceId: string | null): Promise<WebhookEndpoint[]>;
  insertEvent(event: WebhookEvent): Promise<void>;
  getEvent(id: string): Promise<WebhookEvent | null>;
  /**
   * Adds a pending delivery, then drops (status `dropped`, counted on the endpoint) the endpoint's
   * oldest pending deliveries beyond the newest `cap`. Answers how many it dropped.
   */
  addDelivery(delivery: WebhookDelivery, cap: number): Promise<number>;
  /** The delivery of an event to an endpoint, if any. */
  findDelivery(eventId: string, endpointId: string): Promise<WebhookDelivery | null>;
  /** Makes a delivery pending again, due at `at`, its attempts counted from zero. */
  requeue(id: string, at: string): Promise<void>;
  /** The endpoint's deliveries, newest first, the first `limit` before the id `before`. */
  listDeliveries(endpointId: string, before: string | null, limit: number): Promise<WebhookDelivery[]>;
  /** The attempts of these deliveries, each delivery's newest first, at most `perDelivery` each. */
  attemptsOf(deliveryIds: readonly string[], perDelivery: number): Promise<WebhookAttempt[]>;
  /**
   * Claims at most `limit` pending deliveries due at `now` of endpoints neither paused nor disabled,
   * the earliest due first, for `replicaId` until `leaseUntil` (their next_attempt_at: a claim whose
   * replica died comes due again then). Of one endpoint, no more than `perEndpoint` less the claims
   * `replicaId` holds on it still (their lease not over), so that a replica never holds more than
   * `perEndpoint` of one endpoint at once. On PostgreSQL, rows another replica is claiming are skipped
   * (`FOR UPDATE SKIP LOCKED`), so two replicas never claim one delivery.
   */
  claimDue(
    now: string,
    limit: number,
    replicaId: string,
    leaseUntil: string,
    perEndpoint: number,
  ): Promise<ClaimedDelivery[]>;
  /**
   * Logs an attempt and moves its delivery as `outcome` says, if `replicaId` still holds its claim;
   * false (the attempt logged all the same) when the claim was lost.
   */
  recordAttempt(attempt: WebhookAttempt, outcome: AttemptOutcome, replicaId: string): Promise<boolean>;
  /** Whether a delivery to the endpoint succeeded at `since` or later (a delivered one's last change is its success). */
  deliveredSince(endpointId: string, since: string): Promise<boolean>;
  /** Pending deliveries in all (paused and disabled endpoints' included), and the oldest one's creation. */
  backlog(): Promise<{ pending: number; oldestCreatedAt: string | null }>;
  /** Deletes at most `limit` events created before `before`, the oldest first, with their deliveries and attempts. */
  deleteEventsBefore(before: string, limit: number): Promise<number>;
  /** Deletes at most `limit` attempts logged before `before`, the oldest first. */
  deleteAttemptsBefore(before: string, limit: number): Promise<number>;
}
