// An integration's scheduled switch-off as the admin API, the report and the console show it.
import { z } from 'zod';
import type { SwitchOffSchedule } from '../store/repos/schedules.js';

export const ScheduleViewSchema = z
  .object({
    at: z.iso.datetime(),
    force: z.boolean(),
    retry_minutes: z.number().int(),
    deadline: z.iso.datetime(),
    status: z.enum(['pending', 'done', 'refused', 'cancelled']),
    attempts: z.number().int(),
    next_attempt_at: z.iso.datetime().nullable(),
    last_attempt_at: z.iso.datetime().nullable(),
    last_refusal: z.string().nullable().meta({ description: 'Why the last attempt was refused, or why it ended' }),
    created_by: z.string(),
    created_at: z.iso.datetime(),
  })
  .meta({ id: 'SwitchOffSchedule' });
export type ScheduleView = z.infer<typeof ScheduleViewSchema>;

export const scheduleView = (s: SwitchOffSchedule): ScheduleView => ({
  at: s.at,
  force: s.force,
  retry_minutes: s.retryMinutes,
  deadline: s.deadline,
  status: s.status,
  attempts: s.attempts,
  next_attempt_at: s.status === 'pending' ? s.nextAttemptAt : null,
  last_attempt_at: s.lastAttemptAt,
  last_refusal: s.lastRefusal,
  created_by: s.createdBy,
  created_at: s.createdAt,
});

/** The schedule in a sentence, for the console and the CLI (times as ISO: each medium formats them). */
export function scheduleSentence(s: ScheduleView): string {
  const forced = s.force ? ', forced whatever the readiness verdict' : '';
  switch (s.status) {
    case 'pending':
      return s.attempts === 0
        ? `The switch-off is scheduled at ${s.at}${forced}, by ${s.created_by}.`
        : `The scheduled switch-off was ${s.last_refusal}. Next attempt at ${s.next_attempt_at}; none after ${s.deadline}.`;
    case 'done':
      return `The scheduled switch-off was carried out at ${s.last_attempt_at} (scheduled by ${s.created_by}).`;
    case 'refused':
      return `The scheduled switch-off was given up: ${s.last_refusal}.`;
    case 'cancelled':
      return `The scheduled switch-off at ${s.at} was cancelled: ${s.last_refusal}.`;
  }
}
