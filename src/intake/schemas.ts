// v1 lead submission: the request and response shapes (seed 2.1, 2.2, 2.4), one source for all uses.
import { z } from 'zod';

export const METADATA_MAX_BYTES = 16_384;

const uuid = z.uuid();
const dateTime = z.iso.datetime({ offset: true });

/** Members a bot may not send: they come from the integration settings (seed 2.1, contract 3). */
const FORBIDDEN_FIELDS = ['stage', 'status', 'group', 'team', 'assigned_to', 'tags', 'tag_ids', 'source'] as const;
const forbidden = (field: string) =>
  z
    .never({ error: `${field} is not sent by the integration: it comes from the integration settings in the service` })
    .optional()
    .meta({ description: `Not allowed: ${field} comes from the integration settings.` });

export const EventIdSchema = z
  .string()
  .min(1, 'must not be empty')
  .max(255, 'must be at most 255 characters')
  .meta({ description: 'Permanent identifier of this event; resend exactly the same value on retry.' });

export const ExternalContactIdSchema = z
  .string()
  .min(1, 'must not be empty')
  .max(255, 'must be at most 255 characters')
  .meta({ description: "The integration's permanent id of the person, e.g. telegram:123456" });

const digitCount = (value: string) => value.replace(/\D/g, '').length;

export const PhoneSchema = z
  .string()
  .max(32, 'must be at most 32 characters')
  .refine((v) => digitCount(v) >= 9, 'must hold at least 9 digits (+998XXXXXXXXX, 998XXXXXXXXX or XXXXXXXXX)')
  .meta({ description: 'Uzbekistan number; reduced to its last 9 digits and shown as +998XXXXXXXXX' });

export const MetadataSchema = z
  .record(z.string(), z.unknown())
  .superRefine((value, ctx) => {
    const bytes = Buffer.byteLength(JSON.stringify(value), 'utf8');
    if (bytes > METADATA_MAX_BYTES) {
      ctx.addIssue({ code: 'custom', message: `must be at most ${METADATA_MAX_BYTES} bytes of JSON (got ${bytes})` });
    }
    if (value.source_key !== undefined && typeof value.source_key !== 'string') {
      ctx.addIssue({ code: 'custom', path: ['source_key'], message: 'must be a string' });
    }
  })
  .meta({ description: 'Extra data, at most 16 KB of JSON; source_key holds an advertising or link code' });

/** Answers in one request, whatever the route (v1 answers, a lead submission, a legacy translation). */
export const ANSWERS_MAX = 200;
/** Longer (or empty) keys are reported `invalid`, one by one, never failing the other answers. */
export const ANSWER_KEY_MAX_CHARS = 255;

export const AnswersInputSchema = z
  .record(z.string(), z.unknown())
  .superRefine((value, ctx) => {
    const count = Object.keys(value).length;
    if (count > ANSWERS_MAX) ctx.addIssue({ code: 'custom', message: `must hold at most ${ANSWERS_MAX} answers (got ${count})` });
  })
  .meta({
    description: `Answers keyed by the integration's own names (1 to ${ANSWER_KEY_MAX_CHARS} characters; another key is reported invalid), at most ${ANSWERS_MAX}; values are strings, booleans or numbers`,
    maxProperties: ANSWERS_MAX,
  });

const optionalText = (max: number) => z.string().max(max, `must be at most ${max} characters`).nullish();

export const LeadSubmissionSchema = z
  .strictObject({
    event_id: EventIdSchema,
    external_contact_id: ExternalContactIdSchema.nullish(),
    first_name: z
      .string()
      .max(150, 'must be at most 150 characters')
      .refine((v) => v.trim().length > 0, 'must not be empty'),
    last_name: optionalText(150),
    phone: PhoneSchema.nullish(),
    email: z.email('must be an e-mail address').max(254).nullish(),
    notes: optionalText(10_000),
    metadata: MetadataSchema.nullish(),
    answers: AnswersInputSchema.nullish(),
    ...Object.fromEntries(FORBIDDEN_FIELDS.map((f) => [f, forbidden(f)])),
  })
  .meta({
    id: 'LeadSubmission',
    examples: [
      {
        event_id: 'tg:lead:123456:1',
        external_contact_id: 'telegram:123456',
        first_name: 'Aziza',
        last_name: 'Karimova',
        phone: '+998 90 123-45-67',
        email: 'aziza@example.com',
        notes: 'Asked about the evening frontend course',
        metadata: { source_key: 'ref_jasur_01', utm_campaign: 'spring' },
        answers: { laptop: 'yes' },
      },
    ],
  });
export type LeadSubmission = z.infer<typeof LeadSubmissionSchema>;

// --- Response objects (seed 2.4): every member present, null where there is no value. ---

export const UserDetailSchema = z
  .object({
    id: uuid,
    username: z.string(),
    first_name: z.string(),
    last_name: z.string().nullable(),
    phone: z.string().nullable(),
    avatar: z.string().nullable(),
    created_at: dateTime.nullable(),
    last_login: dateTime.nullable(),
  })
  .meta({ id: 'UserDetail' });

export const StatusDetailSchema = z
  .object({
    id: uuid,
    name: z.string(),
    color: z.string().nullable(),
    is_default: z.boolean(),
    leads_count: z.number().int(),
    order: z.number().int(),
    created_at: dateTime.nullable(),
  })
  .meta({ id: 'StatusDetail' });

export const GroupDetailSchema = z
  .object({
    id: uuid,
    name: z.string(),
    color: z.string().nullable(),
    leads_count: z.number().int(),
    order: z.number().int(),
    created_at: dateTime.nullable(),
  })
  .meta({ id: 'GroupDetail' });

export const TagObjectSchema = z
  .object({
    id: uuid,
    name: z.string(),
    color: z.string().nullable(),
    is_active: z.boolean(),
    archived_at: dateTime.nullable(),
  })
  .meta({ id: 'Tag' });

export const OptionObjectSchema = z
  .object({
    id: uuid,
    field: uuid,
    label: z.string(),
    color: z.string().nullable(),
    is_active: z.boolean(),
    order: z.number().int(),
    created_at: dateTime.nullable(),
    updated_at: dateTime.nullable(),
  })
  .meta({ id: 'FieldOption' });

export const FileObjectSchema = z
  .object({
    id: uuid,
    original_name: z.string(),
    content_type: z.string(),
    checksum_sha256: z.string(),
    scan_status: z.string(),
    size_bytes: z.number().int(),
    created_at: dateTime,
    attached_at: dateTime.nullable(),
  })
  .meta({ id: 'File' });

export const CustomFieldValueSchema = z
  .object({
    id: uuid,
    field: uuid,
    option: uuid.nullable(),
    file_asset: uuid.nullable(),
    text_value: z.string().nullable(),
    decimal_value: z.string().nullable(),
    boolean_value: z.boolean().nullable(),
    date_value: z.iso.date().nullable(),
    datetime_value: dateTime.nullable(),
    updated_at: dateTime,
    selected_options: z.array(uuid),
    option_detail: OptionObjectSchema.nullable(),
    selected_options_detail: z.array(OptionObjectSchema),
    file_detail: FileObjectSchema.nullable(),
  })
  .meta({ id: 'CustomFieldValue' });

export const LeadObjectSchema = z
  .object({
    id: uuid,
    first_name: z.string(),
    last_name: z.string().nullable(),
    phone: z.string().nullable(),
    email: z.string().nullable().meta({ description: 'Additive member: the e-mail known for the lead' }),
    location: z.string().nullable(),
    position: z.string().nullable(),
    region_code: z.string().nullable(),
    country_code: z.string().nullable(),
    source: z.string().nullable(),
    notes: z.string().nullable(),
    currency: z.string().nullable(),
    gender: z.string().nullable(),
    stage: uuid.nullable(),
    status: uuid.nullable(),
    group: uuid.nullable(),
    team: uuid.nullable(),
    assigned_to: uuid.nullable(),
    created_by: uuid.nullable(),
    closed_by: uuid.nullable(),
    invited_by: uuid.nullable().meta({ description: 'Additive member: the inviting person from the source rules' }),
    assigned_to_detail: UserDetailSchema.nullable(),
    closed_by_detail: UserDetailSchema.nullable(),
    created_by_detail: UserDetailSchema.nullable(),
    status_detail: StatusDetailSchema.nullable(),
    group_detail: GroupDetailSchema.nullable(),
    age: z.number().int().nullable(),
    comments_count: z.number().int(),
    order: z.number().int().nullable(),
    value: z.string().nullable(),
    salary: z.string().nullable(),
    payment_balance: z.string().nullable(),
    total_paid: z.string().nullable(),
    last_payment_at: dateTime.nullable(),
    next_date: z.iso.date().nullable(),
    created_at: dateTime,
    updated_at: dateTime,
    closed_at: dateTime.nullable(),
    active_task_due_at: dateTime.nullable(),
    active_task_status: z.string().nullable(),
    close_outcome: z.string().nullable(),
    close_reason: z.string().nullable(),
    extra_data: z.unknown(),
    tag_ids: z.array(uuid),
    tags: z.array(TagObjectSchema),
    custom_field_values: z.array(CustomFieldValueSchema),
  })
  .meta({ id: 'Lead' });
export type LeadObject = z.infer<typeof LeadObjectSchema>;

export const AnswersResultSchema = z
  .object({
    written: z.array(z.string()),
    unchanged: z.array(z.string()),
    kept_existing: z.array(z.string()),
    unmapped: z.array(z.string()),
    invalid: z.array(z.object({ key: z.string(), error: z.string() })),
  })
  .meta({ id: 'AnswersResult' });
export type AnswersResult = z.infer<typeof AnswersResultSchema>;

export const IntakeOutcomeSchema = z.enum(['created', 'attached', 'reactivated']);
export const MatchedBySchema = z.enum(['external_contact_id', 'phone', 'email']).nullable();

export const LeadSubmissionResponseSchema = z
  .object({
    lead: LeadObjectSchema.nullable(),
    replayed: z.boolean(),
    matched_existing: z.boolean(),
    matched_by: MatchedBySchema,
    contact_id: uuid,
    submission_id: uuid,
    deleted: z.boolean(),
    intake_outcome: IntakeOutcomeSchema,
    needs_review: z.boolean(),
    reactivated: z.boolean(),
    answers: AnswersResultSchema,
  })
  .meta({ id: 'LeadSubmissionResponse' });
export type LeadSubmissionResponse = z.infer<typeof LeadSubmissionResponseSchema>;
