// v1 lead submission: the request and response shapes (docs/api.md), one source for all uses.
import { z } from 'zod';
import { EventIdSchema } from '../idempotency/schemas.js';
import { ExternalContactIdSchema, LeadObjectSchema } from '../lead/schemas.js';
import { AnswersInputSchema, AnswersResultSchema } from '../answers/schemas.js';
import { COMMENT_TEXT_MAX } from '../lead/comments.js';

export const METADATA_MAX_BYTES = 16_384;

/**
 * The largest lead submission: its fields (names, phone, e-mail, ids: under 1,500 bytes), `notes` of
 * 10,000 characters at 3 bytes each (30,000), `metadata` of 16,384 bytes and 200 answers of a
 * 255-character key and a 255-byte value (103,200): 151,084 bytes, within 160 KiB. Past it: 413,
 * the body unread.
 */
export const LEAD_BODY_LIMIT_BYTES = 160 * 1_024;
/**
 * Values in one lead body: `metadata` of 16 KiB holds at most 8,191 (an array of `0,`, two bytes each),
 * the answers 200, the fields a dozen: 8,704 refuses no body the schema takes.
 */
export const LEAD_BODY_MAX_VALUES = 8_704;

const uuid = z.uuid();

/** Members a bot may not send: they come from the integration settings (docs/api.md, "submit a lead"). */
const FORBIDDEN_FIELDS = ['stage', 'status', 'group', 'team', 'assigned_to', 'tags', 'tag_ids', 'source'] as const;
const forbidden = (field: string) =>
  z
    .never({ error: `${field} is not sent by the integration: it comes from the integration settings in the service` })
    .optional()
    .meta({ description: `Not allowed: ${field} comes from the integration settings.` });

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
    notes: optionalText(COMMENT_TEXT_MAX),
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
