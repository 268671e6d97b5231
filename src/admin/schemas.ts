// Shapes of the service team's admin API.
import { z } from 'zod';
import { printableText } from '../printable-text.js';
import { PortedFlagSchema } from '../migration/porting.js';
import { LINK_REPORT_UNLINKED_ITEMS } from '../migration/service.js';

export const IntegrationParamsSchema = z.object({
  integration: z.string().min(1).meta({ description: 'Integration id, or its handle workspace:integration' }),
});
export const LeadParamsSchema = z.object({ id: z.uuid('must be a lead id (uuid)') });

export const IntegrationSummarySchema = z
  .object({
    id: z.uuid(),
    handle: z.string(),
    name: z.string(),
    workspace: z.object({ id: z.uuid(), slug: z.string(), name: z.string() }),
    state: z.enum(['legacy', 'migrating', 'switched_off']),
    ported: PortedFlagSchema.nullable(),
  })
  .meta({ id: 'IntegrationSummary' });

// No `actor` member: the audit log names the operator the admin credential belongs to.
export const ReasonSchema = printableText()
  .min(1)
  .max(1000)
  .meta({ description: 'Why, for the audit log (no control characters)' });
const reason = ReasonSchema;

export const ReasonBodySchema = z.strictObject({ reason: reason.optional() }).nullish();

export const ImportKeyBodySchema = z
  .strictObject({
    key: z
      .string()
      .min(8, 'must be at least 8 characters')
      .max(512)
      .optional()
      .meta({ description: 'The legacy key itself' }),
    hash: z
      .string()
      .regex(/^[0-9a-fA-F]{64}$/, 'must be the SHA-256 of the key, 64 hex digits')
      .optional()
      .meta({ description: 'Or its SHA-256, hex' }),
    reason: reason.optional(),
  })
  .refine((b) => (b.key === undefined) !== (b.hash === undefined), { message: 'give exactly one of key or hash' });

export const SwitchOffBodySchema = z.strictObject({
  reason,
  force: z
    .boolean()
    .default(false)
    .meta({ description: 'Switch off even if legacy calls were seen in the quiet period' }),
  quiet_period_hours: z
    .number()
    .int()
    .min(0)
    .max(24 * 30)
    .optional()
    .meta({ description: 'Default 24' }),
});

export const RollbackBodySchema = z.strictObject({ reason });

/** The note of a "ported" mark: printed text, bounded as a reason is. */
export const PortedNoteSchema = printableText()
  .min(1)
  .max(1000)
  .meta({ description: 'What the owner or the service team says of it (no control characters)' });
export const PortedBodySchema = z.strictObject({ note: PortedNoteSchema.optional() }).nullish();

export const StateSchema = z
  .object({ integration_id: z.uuid(), handle: z.string(), state: z.enum(['legacy', 'migrating', 'switched_off']) })
  .meta({ id: 'MigrationState' });

export const AuditEntrySchema = z
  .object({
    id: z.uuid(),
    integration_id: z.uuid(),
    action: z.string(),
    from_state: z.string().nullable(),
    to_state: z.string().nullable(),
    actor: z.string(),
    reason: z.string().nullable(),
    details: z.record(z.string(), z.unknown()).nullable(),
    at: z.iso.datetime(),
  })
  .meta({ id: 'AuditEntry' });

export const AuditQuerySchema = z.object({ limit: z.coerce.number().int().min(1).max(1000).default(100) });

export const ReportQuerySchema = z.object({
  quiet_period_hours: z.coerce
    .number()
    .int()
    .min(0)
    .max(24 * 30)
    .default(24),
});

export const UnlinkedLeadSchema = z
  .object({
    lead_id: z.uuid(),
    code: z.enum(['no_rule', 'missing_member', 'bound_to_another_person']),
    reason: z.string(),
  })
  .meta({
    id: 'UnlinkedLead',
    description: 'A legacy-created lead whose person could not be bound to the integration',
  });

const unlinkedCounts = {
  unlinked_leads_total: z
    .number()
    .int()
    .meta({ description: 'How many legacy-created leads the run left unlinked, in all' }),
  unlinked_by_code: z
    .object({ no_rule: z.number().int(), missing_member: z.number().int(), bound_to_another_person: z.number().int() })
    .meta({ description: 'The leads left unlinked, counted by code' }),
};

export const LinkReportSchema = z
  .object({
    linked_leads: z.number().int().meta({ description: 'Leads linked by this run' }),
    unlinked_leads: z
      .array(UnlinkedLeadSchema)
      .meta({ description: `The first ${LINK_REPORT_UNLINKED_ITEMS} leads left unlinked; all are counted below` }),
    ...unlinkedCounts,
  })
  .meta({ id: 'LinkReport' });

export const KeyParamsSchema = z.object({ integration: z.string(), key: z.uuid() });

export const IssuedKeySchema = z
  .object({
    id: z.uuid(),
    integration_id: z.uuid(),
    kind: z.enum(['v1', 'legacy', 'test']),
    prefix: z.string(),
    key: z.string().meta({ description: 'The key itself. Shown once: it is stored only as a hash.' }),
    created_at: z.iso.datetime(),
    state: z.enum(['legacy', 'migrating', 'switched_off']),
    linked_leads: z.number().int().optional().meta({ description: 'Legacy-created leads linked to the integration' }),
    unlinked_leads: z
      .array(UnlinkedLeadSchema)
      .optional()
      .meta({ description: `The first ${LINK_REPORT_UNLINKED_ITEMS} leads left unlinked` }),
    unlinked_leads_total: unlinkedCounts.unlinked_leads_total.optional(),
    unlinked_by_code: unlinkedCounts.unlinked_by_code.optional(),
    revoked_keys: z.number().int().optional().meta({ description: 'Keys revoked by a renewal' }),
  })
  .meta({ id: 'IssuedKey' });

export const KeySummarySchema = z
  .object({
    id: z.uuid(),
    kind: z.enum(['v1', 'legacy', 'test']),
    prefix: z.string(),
    created_at: z.iso.datetime(),
    created_by: z.string(),
    revoked_at: z.iso.datetime().nullable(),
  })
  .meta({ id: 'KeySummary' });

export const ListedKeySchema = KeySummarySchema.extend({
  last_used_at: z.iso.datetime().nullable().meta({
    description:
      'When the key last authenticated a call (any answer, a 403 after switch-off included); written with the usage counts, so up to USAGE_FLUSH_MS late. Null: never',
  }),
}).meta({ id: 'ListedKey' });

export const MoveLeadBodySchema = z.strictObject({ stage: z.uuid('must be a stage id (uuid)') });
export const CloseLeadBodySchema = z.strictObject({
  outcome: printableText().min(1).max(100).nullish(),
  reason: printableText().min(1).max(1000).nullish(),
  closed_by: printableText().min(1).nullish().meta({ description: 'Username of the employee closing the lead' }),
});

export const ReviewQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

export const ReviewItemSchema = z
  .object({
    submission_id: z.uuid(),
    event_id: z.string(),
    lead_id: z.uuid().nullable(),
    contact_id: z.uuid().nullable(),
    reason: z.string().nullable(),
    created_at: z.iso.datetime(),
  })
  .meta({ id: 'ReviewItem' });

export const FieldParamsSchema = z.object({
  id: z.uuid('must be a lead id (uuid)'),
  field: z.string().min(1).meta({ description: 'Key of the custom field, as in the rules' }),
});

export const SetFieldBodySchema = z.strictObject({
  value: z.union([z.string(), z.number(), z.boolean()]),
  written_by: z.strictObject({
    kind: z.enum(['employee', 'import', 'automation']),
    ref: z
      .string()
      .min(1)
      .max(200)
      .meta({ description: 'Username of the employee, or the name of the import or automation' }),
  }),
});

export const AppliedUnmappedSchema = z
  .object({
    applied: z.array(
      z.object({
        answer_id: z.uuid(),
        key: z.string(),
        lead_id: z.uuid(),
        outcome: z.enum(['written', 'unchanged', 'kept_existing', 'unmapped', 'invalid']),
        error: z.string().nullable(),
      }),
    ),
    still_unmapped: z.number().int().meta({ description: 'Stored answers whose key is still not mapped' }),
    skipped_deleted_lead: z
      .number()
      .int()
      .meta({ description: 'Stored answers whose lead was deleted: set aside, never applied' }),
    remaining: z.number().int().meta({
      description:
        'Answers of a mapped key left for the next call: one call applies at most APPLY_STORED_MAX (2,000); call again until 0',
    }),
  })
  .meta({ id: 'AppliedUnmapped' });

/** Custom-field conditions in one lead list query: each is a sub-query of the SQL that lists. */
export const LEAD_FILTER_CONDITIONS_MAX = 20;

export const LeadListQuerySchema = z.object({
  workspace: z.string().min(1).meta({ description: 'Workspace slug or id' }),
  stage: z.uuid().optional(),
  integration: z.string().optional().meta({ description: 'Only leads this integration created (id or handle)' }),
  field: z
    .union([z.string(), z.array(z.string())])
    .optional()
    .transform((v) => (v === undefined ? [] : [v].flat()))
    .pipe(
      z.array(z.string()).max(LEAD_FILTER_CONDITIONS_MAX, `must be given at most ${LEAD_FILTER_CONDITIONS_MAX} times`),
    )
    .meta({
      description: `key:value on a custom field, repeatable (at most ${LEAD_FILTER_CONDITIONS_MAX} times), e.g. field=laptop:Present&field=study_days:Monday`,
    }),
  before: z.iso.datetime().optional().meta({ description: 'Cursor: next_before of the previous page' }),
  limit: z.coerce.number().int().min(1).max(500).default(50),
});

const ReloadErrorSchema = z.object({
  at: z.string(),
  problems: z
    .array(z.string())
    .meta({ description: 'Each problem with its file and path, as the start-up error names them' }),
});

export const ReplicaSchema = z
  .object({
    id: z.string().meta({ description: 'host:pid:random, new at every start' }),
    host: z.string().nullable(),
    pid: z.number().int().nullable(),
    started_at: z.string().nullable(),
    last_heartbeat_at: z.string(),
    rules_version: z.string().nullable().meta({
      description:
        'The version of the rules it runs; null for a process that runs none (a CLI command) or of an earlier release',
    }),
    rules_loaded_at: z.string().nullable(),
    last_reload_error: ReloadErrorSchema.nullable().meta({
      description: 'Its last reload, if it failed: it kept its previous rules. Null after a reload that succeeded',
    }),
    this_replica: z.boolean().meta({ description: 'The replica that answered this request' }),
  })
  .meta({ id: 'Replica' });

const driftMembers = {
  rules_versions: z.array(z.string()).meta({ description: 'The distinct rules versions among the live replicas' }),
  drift: z.boolean().meta({ description: 'Live replicas run different rules (more than one version)' }),
};

export const ReplicasSchema = z.object({ items: z.array(ReplicaSchema), ...driftMembers }).meta({ id: 'Replicas' });

export const ReplicaReloadSchema = ReplicaSchema.extend({
  outcome: z
    .enum(['reloaded', 'failed', 'no-answer'])
    .meta({ description: 'no-answer: it did not record an answer in time (its rules are as it last recorded them)' }),
}).meta({ id: 'ReplicaReload' });

/** GET /admin/v1/rules: the rules a replica runs, with each file as read (what `rules diff` compares). */
export const RulesInForceSchema = z
  .object({
    rules_version: z.string(),
    loaded_at: z.string(),
    workspaces: z.number().int(),
    integrations: z.number().int(),
    files: z
      .array(
        z.object({
          name: z.string().meta({ description: 'The file name in the rules folder, e.g. brightpath.yaml' }),
          sha256: z
            .string()
            .regex(/^[0-9a-f]{64}$/)
            .meta({ description: "SHA-256 of the file's bytes, hex" }),
          content: z.string().meta({ description: 'The text of the file, as read' }),
        }),
      )
      .meta({ description: 'Every rules file in force, in name order' }),
  })
  .meta({ id: 'RulesInForce' });

export const RulesReloadSchema = z
  .object({
    reloaded: z.literal(true),
    rules_version: z.string().meta({ description: 'The version the replica that answered runs now' }),
    replicas: z.array(ReplicaReloadSchema),
    not_answered: z.array(z.string()).meta({ description: 'Ids of live replicas that did not answer in time' }),
    ...driftMembers,
  })
  .meta({ id: 'RulesReload' });

// The guide's query is the porting room's: the legacy prefix reads the same guide (src/legacy/routes.ts).
export { PortingGuideQuerySchema } from '../porting/guide.js';
