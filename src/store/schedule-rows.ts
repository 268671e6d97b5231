// The scheduled switch-off's row, as both engines hand it over, and its record.
import type { ScheduleStatus, SwitchOffSchedule } from './repos/schedules.js';

export interface ScheduleRow {
  integration_id: string;
  at: string;
  force: number;
  retry_minutes: number;
  deadline: string;
  status: ScheduleStatus;
  attempts: number;
  next_attempt_at: string;
  last_attempt_at: string | null;
  last_refusal: string | null;
  created_by: string;
  created_at: string;
  reason: string | null;
}

export const rowToSchedule = (r: ScheduleRow): SwitchOffSchedule => ({
  integrationId: r.integration_id,
  at: r.at,
  force: r.force === 1,
  retryMinutes: r.retry_minutes,
  deadline: r.deadline,
  status: r.status,
  attempts: r.attempts,
  nextAttemptAt: r.next_attempt_at,
  lastAttemptAt: r.last_attempt_at,
  lastRefusal: r.last_refusal,
  createdBy: r.created_by,
  createdAt: r.created_at,
  reason: r.reason,
});

/** The values of `schedules.put`, in the order of its parameters. */
export const scheduleValues = (s: SwitchOffSchedule): unknown[] => [
  s.integrationId,
  s.at,
  s.force ? 1 : 0,
  s.retryMinutes,
  s.deadline,
  s.status,
  s.attempts,
  s.nextAttemptAt,
  s.lastAttemptAt,
  s.lastRefusal,
  s.createdBy,
  s.createdAt,
  s.reason,
];
