// Retention of what grows with time (docs/operations/retention.md): hourly call counts rolled up;
// old unmapped and invalid answers, old answers 404s, legacy samples, ignored member names, test-call
// matches and stored brownout windows, and ended console sessions deleted; the keys of ended sessions no page showed revoked; by a
// job on one replica at a time.
import type { FastifyBaseLogger } from 'fastify';
import type { Store } from '../store/store.js';
import {
  RETENTION_WEBHOOK_ATTEMPTS_DEFAULT_DAYS,
  RETENTION_WEBHOOK_EVENTS_DEFAULT_DAYS,
  type RetentionSettings,
} from '../config.js';
import { revokeNeverShown } from '../migration/service.js';
import { forgetHotReads } from '../store/hot-reads.js';

export type { RetentionSettings };
/** How often the job runs in each process; the first run is one interval after the start. */
export const RETENTION_EVERY_MS = 10 * 60_000;
/**
 * Rows of each kind one run deletes at most (hourly counts: and the rest of the last hour reached): one
 * short unit of work, whatever the backlog, which the next runs work through.
 */
export const RETENTION_BATCH = 5_000;

/** When a console session is over (src/console/session-store.ts): its row is then deleted. */
export interface SessionBounds {
  idleMs: number;
  maxMs: number;
}

export interface RetentionRun {
  /** false: another process's run held the lock, and this one did nothing. */
  ran: boolean;
  usage_hours_rolled_up: number;
  answers_deleted: number;
  sessions_deleted: number;
  /** Answers-404 entries (per external_contact_id) whose last 404 is older than the usage retention. */
  not_found_deleted: number;
  /** Legacy samples of the porting guide older than RETENTION_USAGE_DAYS (src/porting/). */
  samples_deleted: number;
  /** Rows of live persons found by test calls whose last call is older than RETENTION_USAGE_DAYS (docs/api.md, "Test mode"). */
  test_matches_deleted: number;
  /** Ignored legacy member names (and tags) not sent for RETENTION_USAGE_DAYS. */
  ignored_fields_deleted: number;
  brownout_refusals_deleted: number;
  calendar_moments_deleted: number;
  /** Webhook events past RETENTION_WEBHOOK_EVENTS_DAYS, deleted with their deliveries and attempts. */
  webhook_events_deleted: number;
  /** Logged webhook delivery attempts past RETENTION_WEBHOOK_ATTEMPTS_DAYS. */
  webhook_attempts_deleted: number;
  /** Stored brownout windows (set through the admin API) that ended RETENTION_USAGE_DAYS ago. */
  brownout_windows_deleted: number;
  /** Keys the console issued whose session ended before a page showed them, revoked (docs/console.md). */
  keys_never_shown_revoked: number;
}

const DAY_MS = 86_400_000;

const NOTHING: RetentionRun = {
  ran: false,
  usage_hours_rolled_up: 0,
  answers_deleted: 0,
  sessions_deleted: 0,
  not_found_deleted: 0,
  samples_deleted: 0,
  test_matches_deleted: 0,
  ignored_fields_deleted: 0,
  brownout_refusals_deleted: 0,
  calendar_moments_deleted: 0,
  webhook_events_deleted: 0,
  webhook_attempts_deleted: 0,
  brownout_windows_deleted: 0,
  keys_never_shown_revoked: 0,
};

/**
 * One run, in one unit of work under the retention lock (on PostgreSQL an advisory lock taken without
 * waiting: a run that finds it held does nothing). Hourly counts and answers at most `batch` rows each;
 * sessions that are over all at once (the table holds at most 12 hours of sign-ins).
 */
export async function runRetention(
  store: Store,
  settings: RetentionSettings,
  sessions: SessionBounds,
  now: Date = new Date(),
  batch = RETENTION_BATCH,
): Promise<RetentionRun> {
  const t = now.getTime();
  const run = await store.transact(async (tx): Promise<RetentionRun> => {
    if (!(await tx.locks.tryRetention())) return { ...NOTHING, ran: false };
    const usageBefore = new Date(t - settings.usageDays * DAY_MS).toISOString().slice(0, 13);
    const rolled = await tx.states.rollUpUsage(usageBefore, batch);
    // Usage data as the hourly counts are: a person not seen for as long is no longer worth acting on.
    const notFound = await tx.states.deleteNotFound(new Date(t - settings.usageDays * DAY_MS).toISOString(), batch);
    // A sample is usage data: kept as long as the hourly counts it stands beside.
    const samples = await tx.states.deleteSamplesBefore(new Date(t - settings.usageDays * DAY_MS).toISOString(), batch);
    // What test keys looked up is kept as long as the calls they are counted among.
    const testMatches = await tx.testMatches.deleteBefore(
      new Date(t - settings.usageDays * DAY_MS).toISOString(),
      batch,
    );
    // A member name a bot sent may be the person's (a bot may key its data by them): usage data, kept as long.
    const ignored = await tx.states.deleteIgnoredBefore(new Date(t - settings.usageDays * DAY_MS).toISOString(), batch);
    // Calls refused in a brownout are usage counts too: a window's rows go once it started as long ago.
    const brownouts = await tx.states.deleteBrownoutRefusals(
      new Date(t - settings.usageDays * DAY_MS).toISOString(),
      batch,
    );
    // The calendar's moments told: kept as long as the usage counts, enough to tell each once.
    const moments = await tx.schedules.deleteMomentsBefore(
      new Date(t - settings.usageDays * DAY_MS).toISOString(),
      batch,
    );
    // A stored window is the calendar's history, kept as long as the calls refused in it.
    const windows = await tx.brownouts.deleteEndedBefore(
      new Date(t - settings.usageDays * DAY_MS).toISOString(),
      batch,
    );
    // Webhook events: kept for resending and the delivery log, then deleted with what they were sent as.
    const webhookEvents = await tx.webhooks.deleteEventsBefore(
      new Date(t - (settings.webhookEventsDays ?? RETENTION_WEBHOOK_EVENTS_DEFAULT_DAYS) * DAY_MS).toISOString(),
      batch,
    );
    const webhookAttempts = await tx.webhooks.deleteAttemptsBefore(
      new Date(t - (settings.webhookAttemptsDays ?? RETENTION_WEBHOOK_ATTEMPTS_DEFAULT_DAYS) * DAY_MS).toISOString(),
      batch,
    );
    const expired = await tx.answers.deleteExpired(new Date(t - settings.answersDays * DAY_MS).toISOString(), batch);
    await tx.answers.addKept(expired.perKey);
    // The session store's own bounds: a session idle or open longer than them signs nobody in again.
    const ended = await tx.consoleSessions.deleteExpired(
      new Date(t - sessions.idleMs).toISOString(),
      new Date(t - sessions.maxMs).toISOString(),
    );
    // A key the console issued for a session that ended before a page showed it is a live key nobody
    // saw: revoked, audited as never shown (the sessions deleted above are among those ended).
    const neverShown = await revokeNeverShown(
      tx,
      await tx.consoleSessions.takeUnshownOfEndedSessions(batch),
      now.toISOString(),
    );
    return {
      ran: true,
      usage_hours_rolled_up: rolled,
      answers_deleted: expired.deleted,
      sessions_deleted: ended,
      not_found_deleted: notFound,
      samples_deleted: samples,
      test_matches_deleted: testMatches,
      ignored_fields_deleted: ignored,
      brownout_refusals_deleted: brownouts,
      calendar_moments_deleted: moments,
      webhook_events_deleted: webhookEvents,
      webhook_attempts_deleted: webhookAttempts,
      brownout_windows_deleted: windows,
      keys_never_shown_revoked: neverShown,
    };
  });
  // A key revoked here stops at once in this process too (other processes hear it from the change feed).
  if (run.keys_never_shown_revoked > 0) forgetHotReads(store);
  return run;
}

/** Runs retention every `everyMs` in this process (unref'd: it never keeps the process alive) until stopped. */
export function startRetention(
  store: Store,
  settings: RetentionSettings,
  sessions: SessionBounds,
  log: FastifyBaseLogger,
  everyMs = RETENTION_EVERY_MS,
): { stop(): Promise<void> } {
  let running: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    running = running.then(() =>
      runRetention(store, settings, sessions).then(
        (run) => {
          if (run.ran) log.info({ retention: run }, 'retention ran');
        },
        (error: unknown) => log.warn({ err: error }, 'retention failed; the next run tries again'),
      ),
    );
  }, everyMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
