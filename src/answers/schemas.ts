// Answers: the answers a request carries and what became of them, whatever the route, and the v1
// answers submission's request and response (seed 2.5, 4.2; contract 5).
import { z } from 'zod';
import { EventIdSchema } from '../idempotency/schemas.js';
import { ExternalContactIdSchema } from '../lead/schemas.js';

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
    examples: [{ event_id: 'telegram:laptop:123456:1', external_contact_id: 'telegram:123456', answers: { laptop: 'yes', video_watched: true, days: 'mon, fri' } }],
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
