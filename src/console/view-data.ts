// What every console view is given besides its own data: one time format, the audit log's actions and
// the migration states in words. Templates call these (as `it.fmt`) instead of formatting on their own.
import { brownoutSentence } from '../migration/brownout-report.js';
import { scheduleSentence, type ScheduleView } from '../migration/schedule-view.js';

/** ISO date-times inside a sentence (a readiness reason, a refusal), down to the minute at least. */
const ISO_IN_TEXT = /\b(\d{4}-\d\d-\d\d)T(\d\d:\d\d)(?::\d\d(?:\.\d+)?)?(?:Z|[+-]00:00)\b/g;
const ISO_ALONE = /^\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:\d\d)$/;

/**
 * The console's one time format: `2026-11-26 14:05 UTC`. Every time the gateway stores is UTC, so the
 * page shows it as stored, to the minute; `none` is what a missing time reads as ("never", "open", ...).
 */
export function when(iso: string | null | undefined, none = 'never'): string {
  if (iso === null || iso === undefined || iso === '') return none;
  if (!ISO_ALONE.test(iso)) return iso;
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return iso;
  return `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** A sentence with the times in it written as `when` writes them: the services' words keep raw ISO for the API. */
export const timesIn = (text: string): string =>
  text.replace(ISO_IN_TEXT, (_m, day: string, time: string) => `${day} ${time} UTC`);

/** A value that may be a date-time (a custom field's): in the one format when it is one, as it is otherwise. */
export const valueWithTime = (value: string): string => (ISO_ALONE.test(value) ? when(value) : value);

/** The audit log's actions (src/migration/service.ts, porting.ts, src/answers/unmapped.ts) as the console says them. */
export const AUDIT_ACTION_WORDS: Readonly<Record<string, string>> = {
  legacy_key_imported: 'Legacy key imported',
  v1_key_issued: 'v1 key issued',
  test_key_issued: 'v1 test key issued (for the bot author)',
  keys_renewed: 'Keys renewed (every key revoked, one v1 key issued)',
  key_revoked: 'Key revoked',
  legacy_leads_linked: 'Legacy leads linked',
  switched_off: 'Old interface switched off',
  switched_off_forced: 'Old interface switched off, forced in the quiet period',
  rolled_back: 'Rolled back: the old interface works again',
  switch_off_scheduled: 'Switch-off scheduled',
  brownout_started: 'Brownout window started',
  brownout_ended: 'Brownout window ended',
  brownout_added: 'Brownout window added',
  brownout_cancelled: 'Brownout window cancelled',
  legacy_call_after_ported: 'Legacy call after it was marked ported',
  became_ready: 'Ready for switch-off',
  switch_off_schedule_cancelled: 'Scheduled switch-off cancelled',
  scheduled_switch_off_refused: 'Scheduled switch-off refused: not ready',
  stored_answers_applied: 'Stored answers applied',
  marked_ported: 'Marked ported',
  ported_cleared: 'Ported flag cleared',
};

/** An action in words; one the map does not know yet is shown by its code rather than hidden. */
export const auditAction = (code: string): string => AUDIT_ACTION_WORDS[code] ?? code;

/** A sunset date (`YYYY-MM-DD`, from the integration's rules) as the page says it; none set says so. */
export const sunset = (date: string | null): string => date ?? 'not set';

/** The next moment of an integration's calendar in the overview (overview.ts, `nextMoment`). */
export const nextMoment = (next: { what: string; at: string } | null): string =>
  next === null ? 'none' : `${next.what} ${when(next.at)}`;

/** The helpers every view gets as `it.fmt` (pages.ts render). */
export const viewHelpers = {
  when,
  timesIn,
  valueWithTime,
  auditAction,
  sunset,
  brownout: brownoutSentence,
  schedule: (s: ScheduleView) => timesIn(scheduleSentence(s)),
  nextMoment,
} as const;
