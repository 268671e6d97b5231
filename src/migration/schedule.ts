// The scheduled switch-off (docs/runbook.md, "The scheduled switch-off"): the service team sets a moment;
// at that moment one replica switches the integration off as the actor `schedule`, only if the readiness
// verdict is ready (or the schedule forces it), else records why and tries again until a deadline.
import { z } from 'zod';
import type { FastifyBaseLogger } from 'fastify';
import { AppError } from '../errors.js';
import type { Integration } from '../rules/catalog.js';
import type { RulesHolder } from '../rules/loader.js';
import type { SwitchOffSchedule } from '../store/repos/schedules.js';
import { migrationReport } from './report.js';
import {
  END_TOLD_AFTER_MS,
  momentsBetween,
  MOMENTS_CATCH_UP_MS,
  READINESS_EVERY_MS,
  tellMoment,
  tellReady,
} from './calendar.js';
import { scheduleView, type ScheduleView } from './schedule-view.js';
import { aboutIntegration, writeEvent } from '../webhooks/outbox.js';

export { ScheduleViewSchema, scheduleView } from './schedule-view.js';
import {
  cancelStoredBrownouts,
  commitChange,
  DEFAULT_QUIET_PERIOD_HOURS,
  endSchedule,
  move,
  type Actor,
  type MigrationDeps,
} from './service.js';

export const SCHEDULE_RETRY_MINUTES_DEFAULT = 60;
export const SCHEDULE_RETRY_MINUTES_MIN = 5;
export const SCHEDULE_RETRY_MINUTES_MAX = 1_440;
/** Without a deadline of its own, a schedule is tried for this long after its moment. */
export const SCHEDULE_DEADLINE_DAYS_DEFAULT = 7;
export const SCHEDULE_DEADLINE_DAYS_MAX = 90;
/** How often each replica looks for due schedules: a schedule is carried out within about this of its moment. */
export const SCHEDULE_EVERY_MS = 1_000;
/** How often an integration whose sunset came, without a schedule and not migrating, is looked at again. */
export const SUNSET_LOOK_EVERY_MS = 60_000;
/** Due schedules carried out per look, the earliest first; the rest at the next. */
export const SCHEDULE_BATCH = 10;

const DAY_MS = 86_400_000;
const withZone = { offset: true, error: 'must be a date and time with its zone, e.g. 2026-12-09T10:00:00Z' } as const;

export const ScheduleInputSchema = z.strictObject({
  at: z.iso.datetime(withZone).meta({ description: 'When to switch off, with its zone; not in the past' }),
  force: z.boolean().default(false).meta({ description: 'Switch off whatever the readiness verdict' }),
  retry_minutes: z
    .number()
    .int()
    .min(SCHEDULE_RETRY_MINUTES_MIN)
    .max(SCHEDULE_RETRY_MINUTES_MAX)
    .default(SCHEDULE_RETRY_MINUTES_DEFAULT)
    .meta({ description: 'Minutes between two attempts refused as not ready' }),
  deadline: z.iso
    .datetime(withZone)
    .optional()
    .meta({
      description: `No attempt after it (default: ${SCHEDULE_DEADLINE_DAYS_DEFAULT} days after \`at\`, at most ${SCHEDULE_DEADLINE_DAYS_MAX})`,
    }),
  reason: z.string().max(1_000).optional(),
});
export type ScheduleInput = z.infer<typeof ScheduleInputSchema>;

const invalid = (path: string, message: string) =>
  new AppError('validation-failed', `${path}: ${message}`, { errors: [{ path, message }] });

/** Schedules (or replaces) the integration's switch-off; audited `switch_off_scheduled`. */
export async function scheduleSwitchOff(
  deps: MigrationDeps,
  integration: Integration,
  input: ScheduleInput & Actor,
): Promise<ScheduleView> {
  const now = deps.now?.() ?? new Date();
  const atMs = Date.parse(input.at);
  if (atMs < now.getTime()) throw invalid('/at', `is in the past (now is ${now.toISOString()})`);
  const deadlineMs =
    input.deadline === undefined ? atMs + SCHEDULE_DEADLINE_DAYS_DEFAULT * DAY_MS : Date.parse(input.deadline);
  if (deadlineMs < atMs) throw invalid('/deadline', 'is before `at`');
  if (deadlineMs > atMs + SCHEDULE_DEADLINE_DAYS_MAX * DAY_MS)
    throw invalid('/deadline', `is more than ${SCHEDULE_DEADLINE_DAYS_MAX} days after \`at\``);
  const at = new Date(atMs).toISOString();
  return commitChange(deps.store, integration.id, async (tx) => {
    const state = await tx.states.get(integration.id);
    if (state !== 'migrating')
      throw new AppError(
        'conflict',
        state === 'legacy'
          ? `${integration.handle} has no v1 key yet: issue the additional key first, then schedule its switch-off.`
          : `${integration.handle} is already switched off.`,
        { state },
      );
    const schedule: SwitchOffSchedule = {
      integrationId: integration.id,
      at,
      force: input.force,
      retryMinutes: input.retry_minutes,
      deadline: new Date(deadlineMs).toISOString(),
      status: 'pending',
      attempts: 0,
      nextAttemptAt: at,
      lastAttemptAt: null,
      lastRefusal: null,
      createdBy: input.actor,
      createdAt: now.toISOString(),
      reason: input.reason ?? null,
    };
    await tx.schedules.put(schedule);
    await move(tx, integration, 'switch_off_scheduled', null, input, now.toISOString(), {
      at,
      force: schedule.force,
      retry_minutes: schedule.retryMinutes,
      deadline: schedule.deadline,
    });
    return scheduleView(schedule);
  });
}

/** Cancels a pending schedule (404 when there is none); audited `switch_off_schedule_cancelled`. */
export async function cancelScheduledSwitchOff(
  deps: MigrationDeps,
  integration: Integration,
  who: Actor,
): Promise<ScheduleView> {
  const now = (deps.now?.() ?? new Date()).toISOString();
  return commitChange(deps.store, integration.id, async (tx) => {
    const schedule = await tx.schedules.get(integration.id);
    if (schedule?.status !== 'pending')
      throw new AppError('not-found', `${integration.handle} has no scheduled switch-off pending.`);
    const cancelled = await endSchedule(tx, integration, schedule, `cancelled by ${who.actor}`, now, who);
    return scheduleView(cancelled);
  });
}

/**
 * The schedule the rules make for an integration whose workspace opted in (`switch_off_at_sunset`):
 * its sunset day at 00:00 UTC, by `rules`, written only where the integration has no schedule (one the
 * service team set, or cancelled, stands), and only while it is migrating. Audited as any schedule.
 * Returns whether it made one.
 */
export async function scheduleSunset(deps: MigrationDeps, integration: Integration): Promise<boolean> {
  if (!integration.legacy.switchOffAtSunset || integration.legacy.sunset === null) return false;
  const at = `${integration.legacy.sunset}T00:00:00.000Z`;
  const now = (deps.now?.() ?? new Date()).toISOString();
  return commitChange(deps.store, integration.id, async (tx) => {
    if ((await tx.states.get(integration.id)) !== 'migrating') return false;
    const schedule: SwitchOffSchedule = {
      integrationId: integration.id,
      at,
      force: false,
      retryMinutes: SCHEDULE_RETRY_MINUTES_DEFAULT,
      deadline: new Date(Date.parse(at) + SCHEDULE_DEADLINE_DAYS_DEFAULT * DAY_MS).toISOString(),
      status: 'pending',
      attempts: 0,
      nextAttemptAt: at,
      lastAttemptAt: null,
      lastRefusal: null,
      createdBy: 'rules',
      createdAt: now,
      reason: 'legacy.sunset',
    };
    if (!(await tx.schedules.create(schedule))) return false;
    await move(tx, integration, 'switch_off_scheduled', null, { actor: 'rules', reason: 'legacy.sunset' }, now, {
      at,
      force: false,
      retry_minutes: schedule.retryMinutes,
      deadline: schedule.deadline,
    });
    return true;
  });
}

/** What one attempt did: the log line's and the caller's to read. */
export type Attempt =
  | { outcome: 'switched_off'; forced: boolean }
  | { outcome: 'refused'; reasons: string[]; nextAttemptAt: string | null }
  | { outcome: 'cancelled'; why: string }
  | { outcome: 'not_due' };

/** The report's lists are not read: the verdict is all an attempt needs. */
const VERDICT_ONLY = { unlinked: 0, notFound: 0 };

/**
 * Carries out the integration's schedule if it is due: under the integration's lock, so of several
 * replicas exactly one acts, and the state, the schedule's end and the audit entry are one unit (a
 * replica killed mid-way leaves either all or none of them). `midway` runs inside that unit, between
 * its writes (a process test's pause, ScheduleTestHooks).
 */
export async function attemptSchedule(
  deps: MigrationDeps,
  integration: Integration,
  midway?: () => Promise<void>,
): Promise<Attempt> {
  const now = deps.now?.() ?? new Date();
  const nowIso = now.toISOString();
  // Read before the unit (the report reads in a snapshot of its own); the last legacy call is read
  // again under the lock, so a call that came meanwhile still refuses the switch-off.
  const report = await migrationReport(deps, integration, DEFAULT_QUIET_PERIOD_HOURS, VERDICT_ONLY);
  const who: Actor = { actor: 'schedule' };
  return commitChange(deps.store, integration.id, async (tx): Promise<Attempt> => {
    const schedule = await tx.schedules.get(integration.id);
    if (schedule?.status !== 'pending' || schedule.nextAttemptAt > nowIso) return { outcome: 'not_due' };
    const state = await tx.states.get(integration.id);
    if (state !== 'migrating') {
      const why = `the integration is ${state === 'legacy' ? 'without a v1 key' : 'switched off already'}`;
      await endSchedule(tx, integration, schedule, why, nowIso, who);
      return { outcome: 'cancelled', why };
    }
    const reasons = schedule.force
      ? []
      : [...report.readiness.reasons.filter((r) => !r.startsWith('marked ported') && !r.startsWith('warning:'))];
    const lastLegacy = await tx.states.lastSeen(integration.id, 'legacy');
    const quietSince = new Date(now.getTime() - DEFAULT_QUIET_PERIOD_HOURS * 3_600_000).toISOString();
    if (
      !schedule.force &&
      lastLegacy !== null &&
      lastLegacy > quietSince &&
      !reasons.some((r) => r.includes(lastLegacy))
    )
      reasons.push(
        `the deprecated interface was called at ${lastLegacy}, within the ${DEFAULT_QUIET_PERIOD_HOURS} h quiet period`,
      );
    if (!schedule.force && (report.readiness.verdict !== 'ready' || reasons.length > 0)) {
      const next = new Date(now.getTime() + schedule.retryMinutes * 60_000).toISOString();
      const givenUp = next > schedule.deadline;
      const refusal = `refused at ${nowIso}: ${reasons.join('; ')}${givenUp ? `; no attempt after the deadline ${schedule.deadline}` : ''}`;
      await tx.schedules.put({
        ...schedule,
        status: givenUp ? 'refused' : 'pending',
        attempts: schedule.attempts + 1,
        nextAttemptAt: givenUp ? schedule.nextAttemptAt : next,
        lastAttemptAt: nowIso,
        lastRefusal: refusal,
      });
      await move(tx, integration, 'scheduled_switch_off_refused', null, who, nowIso, {
        reasons,
        next_attempt_at: givenUp ? null : next,
      });
      await writeEvent(
        tx,
        'switch_off_schedule.refused',
        integration.workspace.id,
        {
          ...aboutIntegration(integration),
          reasons,
          next_attempt_at: givenUp ? null : next,
        },
        nowIso,
      );
      return { outcome: 'refused', reasons, nextAttemptAt: givenUp ? null : next };
    }
    await move(
      tx,
      integration,
      schedule.force ? 'switched_off_forced' : 'switched_off',
      'switched_off',
      {
        actor: 'schedule',
        reason: `scheduled by ${schedule.createdBy}${schedule.reason ? `: ${schedule.reason}` : ''}`,
      },
      nowIso,
      { last_legacy_call: lastLegacy, quiet_period_hours: DEFAULT_QUIET_PERIOD_HOURS, scheduled_at: schedule.at },
    );
    await cancelStoredBrownouts(tx, integration, 'switched off', nowIso, who);
    // The state and the audit entry are written, the schedule not yet: where a test kills the replica.
    await midway?.();
    await tx.schedules.put({
      ...schedule,
      status: 'done',
      attempts: schedule.attempts + 1,
      lastAttemptAt: nowIso,
      lastRefusal: null,
    });
    const about = aboutIntegration(integration);
    await writeEvent(
      tx,
      'integration.switched_off',
      integration.workspace.id,
      {
        ...about,
        actor: who.actor,
        forced: schedule.force,
      },
      nowIso,
    );
    await writeEvent(
      tx,
      'switch_off_schedule.carried_out',
      integration.workspace.id,
      {
        ...about,
        scheduled_at: schedule.at,
        forced: schedule.force,
      },
      nowIso,
    );
    return { outcome: 'switched_off', forced: schedule.force };
  });
}

/**
 * Test-only (docs/testing.md): how long a replica waits in the middle of carrying out a switch-off,
 * holding the integration's lock, so that a process test can kill it there. Set by main.ts from
 * TEST_PAUSE_MID_SWITCH_OFF_MS only when NODE_ENV is `test`; 0 everywhere else.
 */
export interface ScheduleTestHooks {
  pauseMidSwitchOffMs?: number;
}

/**
 * Every replica looks each `everyMs` for the calendar's moments since its last look (calendar.ts) and
 * for due schedules (a schedule whose moment passed while no replica ran is carried out at the next
 * start, once), and attempts them one after the other.
 */
export function startScheduleRunner(
  deps: MigrationDeps & { rules: RulesHolder },
  log: FastifyBaseLogger,
  everyMs = SCHEDULE_EVERY_MS,
  readinessEveryMs = READINESS_EVERY_MS,
  hooks: ScheduleTestHooks = {},
): { stop(): Promise<void>; runNow(): Promise<void> } {
  const pauseMs = hooks.pauseMidSwitchOffMs ?? 0;
  let running: Promise<void> = Promise.resolve();
  // The calendar's moments are told from the moment this process last looked (catching up a little at start).
  let toldUntil = (deps.now?.() ?? new Date()).getTime() - MOMENTS_CATCH_UP_MS;
  const sunsetsLookedAt = new Map<string, number>();
  // Readiness is looked at every readinessEveryMs (Infinity: never), the first time that long after the start.
  let readinessLookedAt = (deps.now?.() ?? new Date()).getTime();
  const tick = async () => {
    const nowDate = deps.now?.() ?? new Date();
    const now = nowDate.toISOString();
    // The stored windows that start or end since the last look: one indexed read a second.
    // An end is told END_TOLD_AFTER_MS after it: the stored windows read reach back that much further.
    const stored = await deps.store.readOne((r) =>
      r.brownouts.between(new Date(toldUntil - END_TOLD_AFTER_MS).toISOString(), now),
    );
    for (const moment of momentsBetween(deps.rules, toldUntil, nowDate.getTime(), stored))
      await tellMoment(deps, moment, log);
    toldUntil = nowDate.getTime();
    if (nowDate.getTime() - readinessLookedAt >= readinessEveryMs) {
      readinessLookedAt = nowDate.getTime();
      await tellReady(deps, deps.rules, log);
    }
    // Sunsets that came: an integration not migrating yet is looked at again a minute later; once it
    // has a schedule (made here or not), never again by this process.
    for (const integration of deps.rules.current().integrations.values()) {
      const { sunset, switchOffAtSunset } = integration.legacy;
      if (!switchOffAtSunset || sunset === null || `${sunset}T00:00:00.000Z` > now) continue;
      const looked = sunsetsLookedAt.get(integration.id);
      if (looked === Infinity || (looked !== undefined && nowDate.getTime() - looked < SUNSET_LOOK_EVERY_MS)) continue;
      if (await scheduleSunset(deps, integration))
        log.info({ integration: integration.handle, at: sunset }, 'switch-off scheduled at the sunset');
      const has = (await deps.store.readOne((r) => r.schedules.get(integration.id))) !== null;
      sunsetsLookedAt.set(integration.id, has ? Infinity : nowDate.getTime());
    }
    const due = await deps.store.readOne((r) => r.schedules.due(now, SCHEDULE_BATCH));
    for (const id of due) {
      const integration = deps.rules.current().findIntegration(id);
      if (!integration) continue;
      const midway =
        pauseMs > 0
          ? async () => {
              log.warn({ integration: integration.handle, pause_ms: pauseMs }, 'test pause mid switch-off');
              await new Promise((resolve) => setTimeout(resolve, pauseMs));
            }
          : undefined;
      const attempt = await attemptSchedule(deps, integration, midway);
      if (attempt.outcome !== 'not_due')
        log.info({ integration: integration.handle, schedule: attempt }, `scheduled switch-off ${attempt.outcome}`);
    }
  };
  const runNow = () =>
    (running = running.then(() =>
      tick().catch((error: unknown) =>
        log.warn({ err: error }, 'scheduled switch-offs failed; the next look tries again'),
      ),
    ));
  const timer = setInterval(() => void runNow(), everyMs);
  timer.unref();
  return {
    runNow,
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
