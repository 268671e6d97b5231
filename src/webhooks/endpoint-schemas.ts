// The admin API's shapes of webhook endpoints, their deliveries and attempts (docs/webhooks.md), and
// the views of the stored records. A secret appears in two answers only: the endpoint's creation and
// its rotation.
import { z } from 'zod';
import type { WebhookAttempt, WebhookDelivery, WebhookEndpoint } from '../store/repos/webhooks.js';
import { EVENT_TYPES } from './catalogue.js';

export const WEBHOOK_URL_MAX_LENGTH = 2_048;
export const WEBHOOK_DESCRIPTION_MAX_LENGTH = 500;
/** Endpoints at most, in all, and subscribed to one workspace's events (those for every workspace count as one). */
export const WEBHOOK_ENDPOINTS_MAX = 100;
export const WEBHOOK_ENDPOINTS_PER_WORKSPACE_MAX = 20;
/** How long the secret before a rotation keeps signing beside the new one. */
export const SECRET_OVERLAP_HOURS = 24;
export const WEBHOOK_PAGE_MAX = 100;
/** The newest attempts shown with each delivery of the log. */
export const ATTEMPTS_SHOWN_PER_DELIVERY = 10;

/** What an endpoint may subscribe to: every type but `ping`, which is sent to one endpoint on request. */
export const SUBSCRIBABLE_TYPES = EVENT_TYPES.filter((t) => t !== 'ping') as [string, ...string[]];

const EventTypesSchema = z
  .array(z.enum(SUBSCRIBABLE_TYPES))
  .min(1)
  .max(SUBSCRIBABLE_TYPES.length)
  .meta({ description: 'Event types of the catalogue (docs/webhooks.md), at least one' });

export const EndpointInputSchema = z.strictObject({
  url: z
    .string()
    .max(WEBHOOK_URL_MAX_LENGTH)
    .meta({ description: 'https (http only for a host in WEBHOOK_ALLOW_HTTP_HOSTS); no user or password' }),
  event_types: EventTypesSchema,
  workspace: z.string().max(200).optional().meta({ description: 'A workspace id or slug; absent: every workspace' }),
  description: z.string().max(WEBHOOK_DESCRIPTION_MAX_LENGTH).optional(),
});
export type EndpointInput = z.infer<typeof EndpointInputSchema>;

export const EndpointPatchSchema = z
  .strictObject({
    event_types: EventTypesSchema.optional(),
    description: z.string().max(WEBHOOK_DESCRIPTION_MAX_LENGTH).nullable().optional(),
    paused: z.boolean().optional().meta({ description: 'Paused: deliveries are queued, none is sent' }),
    enabled: z
      .literal(true)
      .optional()
      .meta({ description: 'Enables a disabled endpoint again: its pending deliveries are sent, new ones written' }),
  })
  .refine((p) => Object.keys(p).length > 0, {
    message: 'name at least one of event_types, description, paused, enabled',
  });
export type EndpointPatch = z.infer<typeof EndpointPatchSchema>;

export const EndpointParamsSchema = z.object({ id: z.string().max(100) });
export const PageQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(WEBHOOK_PAGE_MAX).default(50),
  after: z.string().max(100).optional().meta({ description: 'The last id of the previous page' }),
});
export const ResendQuerySchema = z.object({ endpoint: z.string().max(100) });

export const EndpointViewSchema = z.object({
  id: z.string(),
  url: z.string(),
  event_types: z.array(z.string()),
  workspace_id: z.string().nullable(),
  description: z.string().nullable(),
  paused: z.boolean(),
  disabled_at: z.string().nullable(),
  disabled_reason: z.string().nullable(),
  dropped_deliveries: z.number().int(),
  previous_secret_until: z
    .string()
    .nullable()
    .meta({ description: 'Until when the secret before the last rotation still signs' }),
  created_by: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});
export const EndpointWithSecretSchema = EndpointViewSchema.extend({
  secret: z.string().meta({ description: 'The signing secret (whsec_…), shown in this answer only' }),
});
export const EndpointPageSchema = z.object({ items: z.array(EndpointViewSchema), next_after: z.string().nullable() });

export const AttemptViewSchema = z.object({
  at: z.string(),
  status_code: z.number().int().nullable(),
  duration_ms: z.number().int(),
  response_head: z.string().nullable(),
  error: z.string().nullable(),
});
export const DeliveryViewSchema = z.object({
  id: z.string(),
  event_id: z.string(),
  status: z.enum(['pending', 'delivered', 'failed', 'dropped']),
  attempts: z.number().int(),
  next_attempt_at: z.string().nullable(),
  last_status: z.number().int().nullable(),
  last_error: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  attempt_log: z.array(AttemptViewSchema),
});
export const DeliveryPageSchema = z.object({ items: z.array(DeliveryViewSchema), next_after: z.string().nullable() });
export const EventWrittenSchema = z.object({ event_id: z.string(), delivery_id: z.string().nullable() });

export const endpointView = (e: WebhookEndpoint): z.infer<typeof EndpointViewSchema> => ({
  id: e.id,
  url: e.url,
  event_types: e.eventTypes,
  workspace_id: e.workspaceId,
  description: e.description,
  paused: e.paused,
  disabled_at: e.disabledAt,
  disabled_reason: e.disabledReason,
  dropped_deliveries: e.droppedDeliveries,
  previous_secret_until: e.previousSecretUntil,
  created_by: e.createdBy,
  created_at: e.createdAt,
  updated_at: e.updatedAt,
});

export const deliveryView = (
  d: WebhookDelivery,
  attempts: readonly WebhookAttempt[],
): z.infer<typeof DeliveryViewSchema> => ({
  id: d.id,
  event_id: d.eventId,
  status: d.status,
  attempts: d.attempts,
  next_attempt_at: d.status === 'pending' ? d.nextAttemptAt : null,
  last_status: d.lastStatus,
  last_error: d.lastError,
  created_at: d.createdAt,
  updated_at: d.updatedAt,
  attempt_log: attempts.map((a) => ({
    at: a.at,
    status_code: a.statusCode,
    duration_ms: a.durationMs,
    response_head: a.responseHead,
    error: a.error,
  })),
});
