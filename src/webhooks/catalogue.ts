// The catalogue of outgoing events (docs/webhooks.md): each type's data as a zod schema, inside one
// envelope {type, timestamp, data}. No event carries a key, a password or a person's data: an
// integration, a workspace, an actor, counts and moments.
import { z } from 'zod';

const iso = z.string().meta({ description: 'ISO 8601, UTC' });

const IntegrationRefSchema = z.strictObject({
  id: z.string(),
  handle: z.string().meta({ description: '`workspace-slug:integration-slug`' }),
  name: z.string(),
});

/** What every event about an integration carries. */
const about = {
  integration: IntegrationRefSchema,
  workspace_id: z.string(),
};
const actor = z.string().meta({ description: 'Who made the change: an operator, `schedule`, `calendar`, `console`' });
const window = z.strictObject({ start: iso, end: iso });

/** Each event type and its data, in the order docs/webhooks.md lists them. */
export const EVENT_DATA = {
  ping: z.strictObject({
    endpoint_id: z.string(),
    actor,
  }),
  'integration.key_issued': z.strictObject({ ...about, actor, state: z.string() }),
  'integration.switched_off': z.strictObject({ ...about, actor, forced: z.boolean() }),
  'integration.rolled_back': z.strictObject({ ...about, actor, reason: z.string() }),
  'integration.renewed': z.strictObject({
    ...about,
    actor,
    revoked_keys: z.number().int().meta({ description: 'Keys the renewal stopped' }),
  }),
  'integration.ready_for_switch_off': z.strictObject({ ...about, last_legacy_call: iso.nullable() }),
  'integration.legacy_call_after_ported': z.strictObject({ ...about, ported_at: iso, call_at: iso }),
  'brownout.started': z.strictObject({ ...about, window }),
  'brownout.ended': z.strictObject({
    ...about,
    window,
    refused_calls: z.number().int().meta({ description: 'Legacy calls refused in the window' }),
  }),
  'switch_off_schedule.carried_out': z.strictObject({ ...about, scheduled_at: iso, forced: z.boolean() }),
  'switch_off_schedule.refused': z.strictObject({
    ...about,
    reasons: z.array(z.string()),
    next_attempt_at: iso.nullable().meta({ description: 'null: the deadline passed, the schedule was given up' }),
  }),
  'answer_key.unmapped_first_seen': z.strictObject({ ...about, answer_key: z.string() }),
  'lead.needs_review': z.strictObject({ ...about, lead_id: z.string(), reason: z.string() }),
  'answers.unknown_id_listed': z.strictObject({ ...about, listed: z.number().int() }),
} as const;

export type EventType = keyof typeof EVENT_DATA;
export const EVENT_TYPES = Object.keys(EVENT_DATA) as EventType[];
export type EventData<T extends EventType> = z.infer<(typeof EVENT_DATA)[T]>;

/** What each event tells, for the OpenAPI document and docs/webhooks.md. */
export const EVENT_SUMMARIES: Record<EventType, string> = {
  ping: 'A test event the service team sent to one endpoint',
  'integration.key_issued': "An integration's additional v1 key was issued",
  'integration.switched_off': "An integration's deprecated interface was switched off",
  'integration.rolled_back': 'A switched-off integration was rolled back to migrating',
  'integration.renewed': "An integration's keys were renewed: every current key stopped, one new v1 key issued",
  'integration.ready_for_switch_off': 'A migrating integration became ready for switch-off',
  'integration.legacy_call_after_ported': 'The first legacy call after the integration was marked ported',
  'brownout.started': "A brownout window of an integration's deprecated interface started",
  'brownout.ended': 'A brownout window ended, with the legacy calls refused in it',
  'switch_off_schedule.carried_out': 'A scheduled switch-off was carried out',
  'switch_off_schedule.refused': 'An attempt of a scheduled switch-off was refused as not ready',
  'answer_key.unmapped_first_seen': 'An answer key no mapping knows was first seen',
  'lead.needs_review': 'A lead needs review',
  'answers.unknown_id_listed': 'Answers named a person the gateway does not know',
};

/** The envelope of one type: what an endpoint receives as the JSON body. */
export function envelopeSchema<T extends EventType>(type: T) {
  return z.strictObject({
    type: z.literal(type),
    timestamp: iso.meta({ description: 'When the change happened; order events by it' }),
    data: EVENT_DATA[type],
  });
}

export type Envelope<T extends EventType = EventType> = {
  type: T;
  timestamp: string;
  data: EventData<T>;
};

/** The OpenAPI 3.1 `webhooks` object: one operation per event type, its body the envelope. */
export function webhooksDocument(): Record<string, unknown> {
  const headers = {
    'webhook-id': { description: 'The event id (`msg_…`): the same on every attempt; de-duplicate by it' },
    'webhook-timestamp': { description: 'When this attempt was signed (Unix seconds)' },
    'webhook-signature': { description: 'Standard Webhooks signatures (`v1,<base64>` separated by spaces)' },
  };
  return Object.fromEntries(
    EVENT_TYPES.map((type) => {
      const { $schema: _ignored, ...schema } = z.toJSONSchema(envelopeSchema(type), { io: 'output' });
      return [
        type,
        {
          post: {
            operationId: `webhook${type
              .split(/[._]/)
              .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
              .join('')}`,
            summary: EVENT_SUMMARIES[type],
            tags: ['webhooks'],
            parameters: Object.entries(headers).map(([name, h]) => ({
              name,
              in: 'header',
              required: true,
              description: h.description,
              schema: { type: 'string' },
            })),
            requestBody: { required: true, content: { 'application/json': { schema } } },
            responses: { '2XX': { description: 'Received: any 2xx ends the delivery' } },
            // The receiver is called with no credential of its own: it verifies the signature headers.
            security: [],
          },
        },
      ];
    }),
  );
}
