// The webhook tables' rows, as both engines hand them over (integers as numbers, flags as 0 or 1,
// lists and payloads as JSON text), and their records.
import type { WebhookAttempt, WebhookDelivery, WebhookEndpoint, WebhookEvent } from './repos/webhooks.js';

export interface EndpointRow {
  id: string;
  url: string;
  event_types: string;
  workspace_id: string | null;
  description: string | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: string | null;
  paused: number;
  disabled_at: string | null;
  disabled_reason: string | null;
  dropped_deliveries: number;
  created_by: string;
  created_at: string;
  updated_at: string;
}

export const rowToEndpoint = (r: EndpointRow): WebhookEndpoint => ({
  id: r.id,
  url: r.url,
  eventTypes: JSON.parse(r.event_types) as string[],
  workspaceId: r.workspace_id,
  description: r.description,
  secret: r.secret,
  previousSecret: r.previous_secret,
  previousSecretUntil: r.previous_secret_until,
  paused: r.paused === 1,
  disabledAt: r.disabled_at,
  disabledReason: r.disabled_reason,
  droppedDeliveries: r.dropped_deliveries,
  createdBy: r.created_by,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/** The values of `webhooks.insertEndpoint`, in the order of its parameters. */
export const endpointValues = (e: WebhookEndpoint): unknown[] => [
  e.id,
  e.url,
  JSON.stringify(e.eventTypes),
  e.workspaceId,
  e.description,
  e.secret,
  e.previousSecret,
  e.previousSecretUntil,
  e.paused ? 1 : 0,
  e.disabledAt,
  e.disabledReason,
  e.droppedDeliveries,
  e.createdBy,
  e.createdAt,
  e.updatedAt,
];

/** The values of `webhooks.updateEndpoint`: the id, then what may change. */
export const endpointChanges = (e: WebhookEndpoint): unknown[] => [
  e.id,
  JSON.stringify(e.eventTypes),
  e.description,
  e.secret,
  e.previousSecret,
  e.previousSecretUntil,
  e.paused ? 1 : 0,
  e.disabledAt,
  e.disabledReason,
  e.updatedAt,
];

export interface EventRow {
  id: string;
  type: string;
  workspace_id: string | null;
  payload: string;
  created_at: string;
}

export const rowToEvent = (r: EventRow): WebhookEvent => ({
  id: r.id,
  type: r.type,
  workspaceId: r.workspace_id,
  payload: r.payload,
  createdAt: r.created_at,
});

export interface DeliveryRow {
  id: string;
  event_id: string;
  endpoint_id: string;
  status: WebhookDelivery['status'];
  attempts: number;
  next_attempt_at: string;
  last_status: number | null;
  last_error: string | null;
  claimed_by: string | null;
  claimed_until: string | null;
  created_at: string;
  updated_at: string;
}

export const rowToDelivery = (r: DeliveryRow): WebhookDelivery => ({
  id: r.id,
  eventId: r.event_id,
  endpointId: r.endpoint_id,
  status: r.status,
  attempts: r.attempts,
  nextAttemptAt: r.next_attempt_at,
  lastStatus: r.last_status,
  lastError: r.last_error,
  claimedBy: r.claimed_by,
  claimedUntil: r.claimed_until,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export const deliveryValues = (d: WebhookDelivery): unknown[] => [
  d.id,
  d.eventId,
  d.endpointId,
  d.status,
  d.attempts,
  d.nextAttemptAt,
  d.createdAt,
  d.updatedAt,
];

export interface AttemptRow {
  id: string;
  delivery_id: string;
  at: string;
  status_code: number | null;
  duration_ms: number;
  response_head: string | null;
  error: string | null;
}

export const rowToAttempt = (r: AttemptRow): WebhookAttempt => ({
  id: r.id,
  deliveryId: r.delivery_id,
  at: r.at,
  statusCode: r.status_code,
  durationMs: r.duration_ms,
  responseHead: r.response_head,
  error: r.error,
});

export const attemptValues = (a: WebhookAttempt): unknown[] => [
  a.id,
  a.deliveryId,
  a.at,
  a.statusCode,
  a.durationMs,
  a.responseHead,
  a.error,
];

/** A claimed delivery's row: the delivery's columns, its event's, its endpoint's address and secrets. */
export interface ClaimedRow extends DeliveryRow {
  type: string;
  workspace_id: string | null;
  payload: string;
  event_created_at: string;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: string | null;
}
