// v1 answers submission: request and response shapes (seed 2.5, 4.2; contract 5).
import { z } from 'zod';
import { AnswersInputSchema, AnswersResultSchema, EventIdSchema, ExternalContactIdSchema } from '../intake/schemas.js';

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
