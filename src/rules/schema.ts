// The rules file format (format_version 1): a workspace catalog and its integrations' settings.
import { BrownoutListSchema } from './brownouts.js';
import { z } from 'zod';

const name = z.string().trim().min(1, 'must not be empty').max(200);
const color = z
  .string()
  .regex(/^#[0-9a-fA-F]{6}$/, 'must be a colour like #1e88e5')
  .meta({ description: 'Hex colour, #rrggbb' });
const slug = z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'must be lower-case letters, digits and dashes (a slug)');

export const UserSchema = z.strictObject({
  username: z.string().regex(/^[a-z0-9_.-]{2,64}$/, 'must be 2-64 of a-z, 0-9, _ . -'),
  first_name: name,
  last_name: name.optional(),
  phone: z.string().optional(),
  avatar: z.url().optional(),
});

export const BoardSchema = z.strictObject({
  name,
  stages: z.array(name).min(1, 'a board needs at least one stage'),
});

export const StatusSchema = z.strictObject({ name, color: color.optional(), is_default: z.boolean().default(false) });
export const GroupSchema = z.strictObject({ name, color: color.optional() });
export const TagSchema = z.strictObject({ name, color: color.optional() });

export const FieldTypeSchema = z.enum([
  'text',
  'number',
  'boolean',
  'date',
  'datetime',
  'single_choice',
  'multiple_choice',
]);
export type FieldType = z.infer<typeof FieldTypeSchema>;

export const OptionSchema = z.strictObject({ label: name, color: color.optional() });

export const CustomFieldSchema = z
  .strictObject({
    name,
    type: FieldTypeSchema,
    options: z.array(OptionSchema).optional(),
  })
  .superRefine((field, ctx) => {
    const isChoice = field.type === 'single_choice' || field.type === 'multiple_choice';
    if (isChoice && (field.options ?? []).length === 0) {
      ctx.addIssue({ code: 'custom', path: ['options'], message: `a ${field.type} field needs options` });
    }
    if (!isChoice && field.options !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['options'], message: `a ${field.type} field has no options` });
    }
  });

export const SourceRuleSchema = z
  .strictObject({
    key: z.string().min(1).optional().meta({ description: 'Exact metadata.source_key' }),
    match: z
      .string()
      .min(1)
      .optional()
      .meta({ description: 'Glob on metadata.source_key: * is any run of characters, ? one character' }),
    source: name.meta({ description: "The lead's source" }),
    invited_by: z.string().optional().meta({ description: 'Username of the inviting person' }),
  })
  .refine((rule) => (rule.key === undefined) !== (rule.match === undefined), {
    message: 'give exactly one of key (exact) or match (glob)',
  });

export const LeadDefaultsSchema = z.strictObject({
  board: name,
  stage: name,
  status: name.optional(),
  group: name.optional(),
  assigned_to: z.string().optional().meta({ description: 'Username of the responsible employee' }),
  tags: z.array(name).default([]),
});

export const ConflictPolicySchema = z.enum(['keep_existing', 'integration_wins']).meta({
  description: 'keep_existing: a value from another source is kept; integration_wins: this integration overwrites it',
});

export const AnswerMappingSchema = z.strictObject({
  field: z.string().meta({ description: 'Key of a custom field of the workspace' }),
  values: z
    .record(z.string(), z.union([z.string(), z.boolean()]))
    .optional()
    .meta({
      description: 'Incoming value -> option label (choice fields) or true/false (boolean fields); case-insensitive',
    }),
  policy: ConflictPolicySchema.default('keep_existing'),
});

const scalar = z.union([z.string(), z.boolean(), z.number()]);

export const LegacySettingsSchema = z.strictObject({
  external_contact_id: z
    .string()
    .regex(
      /\{[a-z_.]+\}/,
      'must name at least one member of the legacy lead in braces, e.g. telegram:{extra_data.telegram_id}',
    )
    .optional()
    .meta({ description: 'Template deriving the person id from a legacy lead; {member} or {extra_data.key}' }),
  sunset: z.iso
    .date()
    .optional()
    .meta({ description: 'Date the deprecated interface ends for this integration (Sunset header)' }),
  tags: z
    .record(z.string(), z.strictObject({ answer: z.string().min(1), value: scalar }))
    .default({})
    .meta({ description: 'Legacy tag name -> the answer it stands for' }),
  data: z.record(z.string(), z.string().min(1)).default({}).meta({ description: 'Legacy data key -> answer key' }),
  brownouts: BrownoutListSchema.optional().meta({
    description: "This integration's brownout windows; absent: the workspace's (workspace.legacy.brownouts)",
  }),
});

export const IntegrationSchema = z.strictObject({
  slug,
  name,
  lead_defaults: LeadDefaultsSchema,
  sources: z.array(SourceRuleSchema).default([]),
  /** Answer key (the integration's own name) -> custom field, value map and conflict policy. */
  answers: z.record(z.string().min(1).max(100), AnswerMappingSchema).default({}),
  rate_limit_per_minute: z
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .optional()
    .meta({ description: 'Requests per minute per key of this integration; default RATE_LIMIT_PER_MINUTE' }),
  /** How the deprecated bot interface is translated for this integration. */
  legacy: LegacySettingsSchema.default({ tags: {}, data: {} }),
});

export const RulesFileSchema = z
  .strictObject({
    format_version: z.literal(1, { error: 'must be 1 (the only rules format so far)' }),
    workspace: z.strictObject({
      slug,
      name,
      users: z.array(UserSchema).default([]),
      boards: z.array(BoardSchema).min(1, 'a workspace needs at least one board'),
      statuses: z.array(StatusSchema).default([]),
      groups: z.array(GroupSchema).default([]),
      tags: z.array(TagSchema).default([]),
      custom_fields: z
        .record(z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'field keys are snake_case'), CustomFieldSchema)
        .default({}),
      legacy: z
        .strictObject({
          brownouts: BrownoutListSchema.default([]).meta({
            description: 'Brownout windows of every integration of the workspace that lists none of its own',
          }),
          switch_off_at_sunset: z.boolean().default(false).meta({
            description:
              "Opt-in: an integration's legacy.sunset is its scheduled switch-off (at 00:00 UTC that day), unless one is scheduled already",
          }),
        })
        .default({ brownouts: [], switch_off_at_sunset: false }),
    }),
    integrations: z.array(IntegrationSchema).default([]),
  })
  .superRefine((file, ctx) => checkReferences(file, ctx));

export type RulesFile = z.infer<typeof RulesFileSchema>;

function duplicates(values: string[]): Set<string> {
  const seen = new Set<string>();
  const dup = new Set<string>();
  for (const v of values) (seen.has(v) ? dup : seen).add(v);
  return dup;
}

/** Every name an integration refers to must exist in the workspace catalog. */
function checkReferences(file: RulesFile, ctx: z.RefinementCtx): void {
  const ws = file.workspace;
  const issue = (path: (string | number)[], message: string) => ctx.addIssue({ code: 'custom', path, message });
  const users = new Set(ws.users.map((u) => u.username));
  const lists: [string, string[]][] = [
    ['users', ws.users.map((u) => u.username)],
    ['boards', ws.boards.map((b) => b.name)],
    ['statuses', ws.statuses.map((s) => s.name)],
    ['groups', ws.groups.map((g) => g.name)],
    ['tags', ws.tags.map((t) => t.name)],
  ];
  for (const [list, names] of lists) {
    for (const d of duplicates(names)) issue(['workspace', list], `"${d}" appears twice`);
  }
  for (const d of duplicates(file.integrations.map((i) => i.slug)))
    issue(['integrations'], `slug "${d}" appears twice`);
  if (ws.statuses.filter((s) => s.is_default).length > 1)
    issue(['workspace', 'statuses'], 'at most one status is_default');

  file.integrations.forEach((integration, i) => {
    const at = (...rest: (string | number)[]) => ['integrations', i, ...rest];
    const d = integration.lead_defaults;
    const board = ws.boards.find((b) => b.name === d.board);
    if (!board) issue(at('lead_defaults', 'board'), `no board "${d.board}" in the workspace`);
    else if (!board.stages.includes(d.stage))
      issue(at('lead_defaults', 'stage'), `no stage "${d.stage}" on board "${d.board}"`);
    if (d.status !== undefined && !ws.statuses.some((s) => s.name === d.status))
      issue(at('lead_defaults', 'status'), `no status "${d.status}" in the workspace`);
    if (d.group !== undefined && !ws.groups.some((g) => g.name === d.group))
      issue(at('lead_defaults', 'group'), `no group "${d.group}" in the workspace`);
    if (d.assigned_to !== undefined && !users.has(d.assigned_to))
      issue(at('lead_defaults', 'assigned_to'), `no user "${d.assigned_to}" in the workspace`);
    d.tags.forEach((tag, t) => {
      if (!ws.tags.some((x) => x.name === tag))
        issue(at('lead_defaults', 'tags', t), `no tag "${tag}" in the workspace`);
    });
    for (const [key, mapping] of Object.entries(integration.answers)) {
      checkAnswerMapping(ws.custom_fields, mapping, (message, ...rest) => issue(at('answers', key, ...rest), message));
    }
    integration.sources.forEach((rule, r) => {
      if (rule.invited_by !== undefined && !users.has(rule.invited_by))
        issue(at('sources', r, 'invited_by'), `no user "${rule.invited_by}" in the workspace`);
    });
  });
}

type Fields = RulesFile['workspace']['custom_fields'];
type Mapping = z.infer<typeof AnswerMappingSchema>;

/** A mapping must name a field of the workspace, and its value map must land on that field's values. */
function checkAnswerMapping(
  fields: Fields,
  mapping: Mapping,
  issue: (message: string, ...path: string[]) => void,
): void {
  // An own member only: `toString` or `constructor` would otherwise be found on Object.prototype.
  const field = Object.hasOwn(fields, mapping.field) ? fields[mapping.field] : undefined;
  if (!field) {
    issue(`no custom field "${mapping.field}" in the workspace`, 'field');
    return;
  }
  if (mapping.values === undefined) return;
  const labels = (field.options ?? []).map((o) => o.label);
  for (const [incoming, target] of Object.entries(mapping.values)) {
    if (field.type === 'boolean') {
      if (typeof target !== 'boolean') issue('a boolean field maps values to true or false', 'values', incoming);
    } else if (field.type === 'single_choice' || field.type === 'multiple_choice') {
      if (typeof target !== 'string' || !labels.includes(target)) {
        issue(
          `"${String(target)}" is not an option of ${field.name}; options: ${labels.join(', ')}`,
          'values',
          incoming,
        );
      }
    } else {
      issue(`a ${field.type} field takes no value map`, 'values');
      return;
    }
  }
}
