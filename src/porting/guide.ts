// The porting guide of one integration (docs/migration.md, "Your bot's own porting guide"): from the legacy routes
// it called in the last 30 days, their redacted samples, its rules and its state, what each call
// becomes on v1, with a v1 request made from the sample. Pure: the reads are in service.ts.
import { z } from 'zod';
import type { Integration } from '../rules/catalog.js';
import type { LegacySample, MigrationState, UsageRow } from '../store/repos/states.js';
import { replacementFor } from './replacements.js';
import { answersFromLegacy, translateLegacyLead } from './translate.js';
import type { LegacyLeadCreate } from './legacy-lead.js';
import { keptName, redactionRules, renamed, TRUNCATED, type RedactedCall, type RedactionRules } from './redact.js';
import { templateJson } from './json-template.js';

/** The guide reads this many days of calls. */
export const GUIDE_WINDOW_DAYS = 30;

/** The guide's query, on the admin route and under the legacy prefix alike. */
export const PortingGuideQuerySchema = z.object({
  format: z
    .enum(['json', 'markdown'])
    .optional()
    .meta({ description: 'markdown: the guide as Markdown (text/markdown); it outranks the Accept header' }),
});

const RedactedCallSchema = z.object({
  method: z.string(),
  path: z.string(),
  query: z.record(z.string(), z.string()),
  body: z.unknown(),
  status: z.number().int(),
  truncated: z.boolean(),
});

const V1ExampleSchema = z.object({
  method: z.literal('POST'),
  path: z.string(),
  body: z.record(z.string(), z.unknown()),
  curl: z.string().meta({ description: 'The request as a curl command; <gateway> and <v1-key> are placeholders' }),
});

const GuideRouteSchema = z
  .object({
    route: z
      .string()
      .meta({ description: 'METHOD /path as the gateway counts it, e.g. PATCH /api/bots/api/leads/:id/' }),
    kind: z.enum(['translated', 'not_needed', 'not_available']),
    calls_30d: z.number().int(),
    last_call: z.iso.datetime().nullable(),
    replacement: z.object({ method: z.string(), path: z.string() }).nullable(),
    advice: z.string(),
    sample: z.object({ captured_at: z.iso.datetime(), call: RedactedCallSchema }).nullable(),
    v1_example: V1ExampleSchema.nullable().meta({
      description:
        'The v1 request replacing the sample, its personal values as placeholders; null when nothing replaces it or no sample is kept',
    }),
    notes: z.array(z.string()),
  })
  .meta({ id: 'PortingGuideRoute' });

export const PortingGuideSchema = z
  .object({
    integration: z.object({ id: z.uuid(), handle: z.string(), name: z.string() }),
    state: z.enum(['legacy', 'migrating', 'switched_off']),
    generated_at: z.iso.datetime(),
    fix_by: z.string().nullable().meta({
      description:
        "The integration's legacy sunset date (legacy.sunset): the deprecated interface stops answering after it",
    }),
    window_days: z.number().int(),
    person_id: z.object({
      rule: z.string().nullable(),
      v1: z.string().meta({ description: 'The external_contact_id to send, placeholders for the person' }),
    }),
    event_id_scheme: z.object({ lead: z.string(), answers: z.string(), advice: z.string() }),
    source: z.string(),
    data_rules: z.array(z.object({ extra_data_key: z.string(), answer: z.string() })),
    tag_rules: z.array(
      z.object({ tag: z.string(), answer: z.string(), value: z.union([z.string(), z.boolean(), z.number()]) }),
    ),
    routes: z.array(GuideRouteSchema),
    not_needed: z.array(z.object({ route: z.string(), calls_30d: z.number().int() })),
    not_available: z.array(z.object({ route: z.string(), calls_30d: z.number().int() })),
    ignored_legacy_fields: z.array(
      z.object({ field: z.string(), calls: z.number().int(), last_seen: z.iso.datetime(), advice: z.string() }),
    ),
    placeholders: z.record(z.string(), z.string()),
  })
  .meta({ id: 'PortingGuide' });
export type PortingGuide = z.infer<typeof PortingGuideSchema>;
type GuideRoute = z.infer<typeof GuideRouteSchema>;

export interface GuideInput {
  integration: Integration;
  state: MigrationState;
  now: Date;
  /** Per route, calls since the window's first hour (both interfaces; the guide reads the legacy ones). */
  usage: UsageRow[];
  samples: LegacySample[];
  ignored: { field: string; calls: number; lastSeen: string }[];
  /** Names of the tags the bots created with tags/create/, by id (catalog tags are in the rules). */
  createdTags: ReadonlyMap<string, string>;
}

export const PLACEHOLDER_MEANINGS: Record<string, string> = {
  '<gateway>': "the gateway's base URL",
  '<v1-key>': "the integration's v1 key (Authorization: Bearer)",
  '<name>': "the person's name",
  '<phone>': "the person's phone",
  '<email>': "the person's e-mail",
  '<text>': 'free text the person or the bot wrote',
  '<id>': "an id: in external_contact_id and event_id the person's own (e.g. their Telegram id)",
  '<number-id>':
    "the person's id, the one in external_contact_id, as a JSON number without quotes: the bot sent it as a number",
  '<number>':
    'a number: send it as a JSON number, without quotes, as the examples write it (the JSON form of the guide, being JSON, holds this placeholder as a string)',
  '<source>': 'the campaign or referral key the bot sent as source',
  '<value>': 'a value the sample does not show',
  '<n>': 'a counter of your own: a new one per new inquiry or change, the same one when you resend after a failure',
};

const LEADS = '/api/integrations/v1/leads/';
const ANSWERS = '/api/integrations/v1/leads/answers/';

/** A placeholder for each member of the person-id rule: what the bot sends in place of the real person. */
export function personIdExample(template: string | null): string {
  if (template === null) return '<id>';
  return template.replace(/\{([a-z_.]+)\}/g, (_, member: string) =>
    member === 'phone'
      ? '<phone>'
      : member === 'email'
        ? '<email>'
        : member === 'first_name' || member === 'last_name'
          ? '<name>'
          : '<id>',
  );
}

/** Removes the truncation markers a sample may hold: a v1 example carries only what was sent. */
function unmarked(value: unknown): unknown {
  if (Array.isArray(value)) return value.filter((v) => v !== TRUNCATED).map(unmarked);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => k !== TRUNCATED)
      .map(([k, v]) => [k, unmarked(v)]),
  );
}

const shellQuoted = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;

export function curlFor(path: string, body: Record<string, unknown>): string {
  return [
    `curl -X POST '<gateway>${path}'`,
    `  -H 'Authorization: Bearer <v1-key>' -H 'Content-Type: application/json'`,
    `  -d ${shellQuoted(templateJson(body))}`,
  ].join(' \\\n');
}

const tagIdsOf = (body: Record<string, unknown>): string[] =>
  Array.isArray(body.tag_ids) ? body.tag_ids.filter((t): t is string => typeof t === 'string') : [];
const dataOf = (body: Record<string, unknown>): Record<string, unknown> =>
  body.extra_data !== null && typeof body.extra_data === 'object' && !Array.isArray(body.extra_data)
    ? (body.extra_data as Record<string, unknown>)
    : {};

function tagNames(input: GuideInput, ids: readonly string[]): string[] {
  const names: string[] = [];
  for (const id of ids) {
    const name = input.integration.workspace.tags.get(id)?.name ?? input.createdTags.get(id);
    if (name !== undefined) names.push(name);
  }
  return names;
}

/** The v1 lead submission the sampled legacy POST becomes, through the same translation the gateway runs. */
function leadExample(input: GuideInput, body: Record<string, unknown>): Record<string, unknown> {
  const { integration } = input;
  const t = translateLegacyLead(integration, body as LegacyLeadCreate, tagNames(input, tagIdsOf(body)));
  // The rule's placeholders, not the sample's values: a person id sent as a number is `<number-id>` there.
  const person = personIdExample(integration.legacy.externalContactId);
  const out: Record<string, unknown> = { event_id: `${person}:lead:<n>`, external_contact_id: person };
  for (const member of ['first_name', 'last_name', 'phone', 'email', 'notes'] as const) {
    if (body[member] !== undefined && body[member] !== null) out[member] = body[member];
  }
  if (t.metadata) out.metadata = t.metadata;
  if (Object.keys(t.answers).length > 0) out.answers = t.answers;
  return out;
}

/** The v1 answers submission the sampled PATCH or PUT becomes: its tags and data through the legacy rules. */
function answersExample(input: GuideInput, body: Record<string, unknown>): Record<string, unknown> | null {
  const { answers } = answersFromLegacy(input.integration, tagNames(input, tagIdsOf(body)), dataOf(body));
  if (Object.keys(answers).length === 0) return null;
  const person = personIdExample(input.integration.legacy.externalContactId);
  return { event_id: `${person}:answers:<n>`, external_contact_id: person, answers };
}

function routeEntry(
  input: GuideInput,
  rules: RedactionRules,
  row: UsageRow,
  sample: LegacySample | undefined,
): GuideRoute {
  const [method = '', path = ''] = row.route.split(' ');
  const replacement = replacementFor(method, path);
  const kind =
    replacement.method !== null
      ? 'translated'
      : replacement.advice.startsWith('Not needed')
        ? 'not_needed'
        : 'not_available';
  const notes: string[] = [];
  let example: GuideRoute['v1_example'] = null;
  // Names as today's rule shows them, whenever the sample was kept.
  const call = sample ? renamed(sample.sample as unknown as RedactedCall, rules) : undefined;
  if (kind === 'translated' && replacement.path !== null) {
    const body =
      call && call.body !== null && typeof call.body === 'object' && !Array.isArray(call.body)
        ? (unmarked(call.body) as Record<string, unknown>)
        : null;
    if (body === null)
      notes.push(
        'No answered call of this route is kept (samples are kept as long as the call counts), so there is no example.',
      );
    else {
      const v1 = replacement.path === LEADS ? leadExample(input, body) : answersExample(input, body);
      if (v1 === null)
        notes.push(
          'Nothing to send: none of the tags or data in this call has a rule (legacy.tags, legacy.data); they changed nothing.',
        );
      else example = { method: 'POST', path: replacement.path, body: v1, curl: curlFor(replacement.path, v1) };
      if (call?.truncated) notes.push('The sample was cut to its first members (8 KiB): the example shows only those.');
    }
    if (replacement.path === ANSWERS)
      notes.push(
        'Stage and tags stay as the integration settings give them; a tag is sent as the answer its legacy.tags rule names.',
      );
  }
  return {
    route: row.route,
    kind,
    calls_30d: row.calls,
    last_call: row.lastSeen,
    replacement:
      replacement.method !== null && replacement.path !== null
        ? { method: replacement.method, path: replacement.path }
        : null,
    advice: replacement.advice,
    sample: call && sample ? { captured_at: sample.at, call } : null,
    v1_example: example,
    notes,
  };
}

function ignoredAdvice(field: string): string {
  if (field.startsWith('tag:'))
    return 'This tag has no legacy.tags rule: nothing came of it. Send the fact it stands for as an answer, or ask for a rule (docs/rules.md).';
  if (['stage', 'status', 'group', 'assigned_to', 'board'].includes(field))
    return 'Set by the integration settings (lead_defaults); drop it.';
  return 'Never read by the gateway: drop it, or send it as an answer if it is a fact about the person.';
}

/**
 * An ignored member's name as the samples show member names (keptName), N its place in the list; a tag
 * (`tag:<name>`) by its name, a label the workspace's bots list with GET tags/.
 */
const ignoredShown = (field: string, index: number, rules: RedactionRules): string =>
  field.startsWith('tag:') ? field : keptName(field, index, rules);

export function buildGuide(input: GuideInput): PortingGuide {
  const { integration } = input;
  const samples = new Map(input.samples.map((s) => [s.route, s]));
  const rows = input.usage
    .filter((r) => r.interface === 'legacy' && r.calls > 0)
    .sort((a, b) => a.route.localeCompare(b.route));
  const rules = redactionRules(integration);
  const routes = rows.map((r) => routeEntry(input, rules, r, samples.get(r.route)));
  const listed = (kind: GuideRoute['kind']) =>
    routes.filter((r) => r.kind === kind).map((r) => ({ route: r.route, calls_30d: r.calls_30d }));
  const person = personIdExample(integration.legacy.externalContactId);
  return {
    integration: { id: integration.id, handle: integration.handle, name: integration.name },
    state: input.state,
    generated_at: input.now.toISOString(),
    fix_by: integration.legacy.sunset,
    window_days: GUIDE_WINDOW_DAYS,
    person_id: { rule: integration.legacy.externalContactId, v1: person },
    event_id_scheme: {
      lead: `${person}:lead:<n>`,
      answers: `${person}:answers:<n>`,
      advice:
        'One event_id per change, kept when the same request is resent: a resend is then answered as a replay and creates nothing.',
    },
    source:
      'The legacy source is sent as metadata.source_key; the integration settings (sources) turn it into the lead source.',
    data_rules: [...integration.legacy.data].map(([key, answer]) => ({ extra_data_key: key, answer })),
    tag_rules: [...integration.legacy.tags].map(([tag, rule]) => ({ tag, answer: rule.answer, value: rule.value })),
    routes,
    not_needed: listed('not_needed'),
    not_available: listed('not_available'),
    ignored_legacy_fields: input.ignored.map((f, i) => ({
      field: ignoredShown(f.field, i, rules),
      calls: f.calls,
      last_seen: f.lastSeen,
      advice: ignoredAdvice(f.field),
    })),
    placeholders: PLACEHOLDER_MEANINGS,
  };
}
