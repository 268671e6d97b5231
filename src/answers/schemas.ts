// Answers: the answers a request carries and what became of them, whatever the route, and the v1
// answers submission's request and response (docs/api.md, "submit answers about a lead").
import { z } from 'zod';
import { EventIdSchema } from '../idempotency/schemas.js';
import { ExternalContactIdSchema } from '../lead/schemas.js';

/** Answers in one request, whatever the route (v1 answers, a lead submission, a legacy translation). */
export const ANSWERS_MAX = 200;
/** Longer (or empty) keys are reported `invalid`, one by one, never failing the other answers. */
export const ANSWER_KEY_MAX_CHARS = 255;
/** What a request with more answers is told at `/answers`, by the scan of its text (json-body.ts) or the schema. */
export const ANSWERS_TOO_MANY = `must hold at most ${ANSWERS_MAX} answers`;
/** The `answers` member counted while the body is scanned, before it is parsed. */
export const ANSWERS_COUNTED = { member: 'answers', max: ANSWERS_MAX, message: ANSWERS_TOO_MANY } as const;

/**
 * The largest answers submission: 200 answers, each a 255-character key and a value of 255 bytes of
 * JSON text (200 × 516 bytes with quotes, colon and comma = 103,200), an `event_id` and an
 * `external_contact_id` of 255 characters, with room to spare; a longer value fits when others are
 * shorter (one 10,000-character text answer among them). Past it: 413, the body unread.
 */
export const ANSWERS_BODY_LIMIT_BYTES = 128 * 1_024;
/** Values in one answers body: its 200 answers and 3 members, with room for answers whose values are not scalars (reported invalid). */
export const ANSWERS_BODY_MAX_VALUES = 1_024;

export const AnswersInputSchema = z
  .record(z.string(), z.unknown())
  .superRefine((value, ctx) => {
    if (Object.keys(value).length > ANSWERS_MAX) ctx.addIssue({ code: 'custom', message: ANSWERS_TOO_MANY });
  })
  .meta({
    description: `Answers keyed by the integration's own names (1 to ${ANSWER_KEY_MAX_CHARS} characters; another key is reported invalid), at most ${ANSWERS_MAX}; values are strings, booleans or numbers`,
    maxProperties: ANSWERS_MAX,
  });

export const AnswersResultSchema = z
  .object({
    written: z.array(z.string()),
    unchanged: z.array(z.string()),
    kept_existing: z.array(z.string()),
    unmapped: z.array(z.string()),
    invalid: z.array(z.object({ key: z.string(), error: z.string() })),
    not_kept: z
      .array(z.string())
      .optional()
      .meta({
        description:
          'Additive member, present only when some were not: keys of unmapped or invalid answers that were reported but not stored, ' +
          'the integration having reached what it keeps of them (distinct keys, answers per key, bytes); they cannot be applied later',
      }),
  })
  .meta({ id: 'AnswersResult' });
export type AnswersResult = z.infer<typeof AnswersResultSchema>;

export const AnswersSubmissionSchema = z
  .strictObject({
    event_id: EventIdSchema.meta({ description: 'A new value per change, e.g. telegram:laptop:123456:1' }),
    external_contact_id: ExternalContactIdSchema,
    answers: AnswersInputSchema,
  })
  .meta({
    id: 'AnswersSubmission',
    examples: [
      {
        event_id: 'telegram:laptop:123456:1',
        external_contact_id: 'telegram:123456',
        answers: { laptop: 'yes', video_watched: true, days: 'mon, fri' },
      },
    ],
  });
export type AnswersSubmission = z.infer<typeof AnswersSubmissionSchema>;

export const AnswersResponseSchema = z
  .object({
    lead_id: z.uuid(),
    contact_id: z.uuid(),
    submission_id: z.uuid().meta({ description: 'Additive member: identifier of this submission' }),
    replayed: z.boolean(),
    deleted: z.boolean(),
    answers: AnswersResultSchema,
  })
  .meta({ id: 'AnswersResponse' });
export type AnswersResponse = z.infer<typeof AnswersResponseSchema>;
