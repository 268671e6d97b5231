// An integration's scheduled switch-off (docs/runbook.md, "The scheduled switch-off"): one row per
// integration, replaced by a new schedule, kept once done, refused or cancelled (what happened to it).

export type ScheduleStatus = 'pending' | 'done' | 'refused' | 'cancelled';

export interface SwitchOffSchedule {
  integrationId: string;
  /** When the switch-off is to be carried out (ISO, UTC). */
  at: string;
  /** Whatever the readiness verdict, as the manual force. */
  force: boolean;
  /** Minutes between two attempts refused as not ready. */
  retryMinutes: number;
  /** No attempt after it: a schedule still refused then is given up (`refused`). */
  deadline: string;
  status: ScheduleStatus;
  attempts: number;
  /** When the next attempt is due, while pending. */
  nextAttemptAt: string;
  lastAttemptAt: string | null;
  /** Why the last attempt was refused (the readiness reasons), or why the schedule ended. */
  lastRefusal: string | null;
  createdBy: string;
  createdAt: string;
  reason: string | null;
}

export interface ScheduleRepo {
  get(integrationId: string): Promise<SwitchOffSchedule | null>;
  /** Writes the integration's schedule whole, replacing the one it had. */
  put(schedule: SwitchOffSchedule): Promise<void>;
  /** Writes the schedule only where the integration has none; false when it had one. */
  create(schedule: SwitchOffSchedule): Promise<boolean>;
  /** Integrations whose pending schedule is due at `now`, the earliest first, at most `limit`. */
  due(now: string, limit: number): Promise<string[]>;
  /** Records that a moment of the integration's calendar was told; false when it was already. */
  recordMoment(integrationId: string, kind: string, at: string, recordedAt: string): Promise<boolean>;
  /** Deletes at most `limit` moments before `before`, the oldest first; returns how many. */
  deleteMomentsBefore(before: string, limit: number): Promise<number>;
}
