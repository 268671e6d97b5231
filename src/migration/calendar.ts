// The service team told of the moments of the migration calendar without watching a page: each
// brownout window's start and its end (with the legacy calls refused in it) becomes an audit entry and
// an info log line, once, whichever replica records it first (docs/runbook.md, "2b. Brownouts").
import type { FastifyBaseLogger } from 'fastify';
import type { Integration } from '../rules/catalog.js';
import type { RulesHolder } from '../rules/loader.js';
import { BROWNOUT_ROWS_PER_INTEGRATION } from './usage.js';
import { DEFAULT_QUIET_PERIOD_HOURS, move, type MigrationDeps } from './service.js';
import { migrationReport } from './report.js';
import { aboutIntegration, writeEvent } from '../webhooks/outbox.js';
import { asWindow } from './brownout-windows.js';
import type { Brownout } from '../rules/brownouts.js';
import type { StoredBrownout } from '../store/repos/brownouts.js';

/**
 * A process that starts tells the moments of this long before its start it may have missed (it was
 * down, or restarting); one told already by another replica is not told again.
 */
export const MOMENTS_CATCH_UP_MS = 10 * 60_000;

/**
 * A window's end is told this long after it: by then every replica has written the calls it refused
 * in the window (each writes its counts every USAGE_FLUSH_MS, a quarter second), so the end's
 * `refused_calls` counts them all, a replica a second or so late to write them included.
 */
export const END_TOLD_AFTER_MS = 2_000;

export type MomentKind = 'brownout_started' | 'brownout_ended';

export interface Moment {
  integration: Integration;
  kind: MomentKind;
  at: string;
  window: { start: string; end: string };
}

/**
 * The moments of every integration's brownout windows due in (sinceMs, nowMs], the earliest first: a
 * start at the window's start, an end END_TOLD_AFTER_MS after the window's end; of the rules' windows,
 * and of `stored`, the stored windows that start or end then (`brownouts.between`).
 */
export function momentsBetween(
  rules: RulesHolder,
  sinceMs: number,
  nowMs: number,
  stored: readonly StoredBrownout[] = [],
): Moment[] {
  const found: (Moment & { ms: number })[] = [];
  const add = (integration: Integration, w: Brownout) => {
    const window = { start: w.start, end: w.end };
    if (w.startMs > sinceMs && w.startMs <= nowMs)
      found.push({ integration, kind: 'brownout_started', at: w.start, window, ms: w.startMs });
    const endDue = w.endMs + END_TOLD_AFTER_MS;
    if (endDue > sinceMs && endDue <= nowMs)
      found.push({ integration, kind: 'brownout_ended', at: w.end, window, ms: endDue });
  };
  const current = rules.current();
  for (const integration of current.integrations.values())
    for (const w of integration.legacy.brownouts) add(integration, w);
  for (const w of stored) {
    const integration = current.findIntegration(w.integrationId);
    if (integration) add(integration, asWindow(w));
  }
  return found.sort((a, b) => a.ms - b.ms).map(({ ms: _ms, ...moment }) => moment);
}

/**
 * Tells a moment once: in one unit, the moment recorded and its audit entry written, so of several
 * replicas exactly one tells it. A window of an integration switched off refused nothing (the
 * switch-off answers first): it is recorded, not told. Returns whether this call told it.
 */
export async function tellMoment(deps: MigrationDeps, moment: Moment, log: FastifyBaseLogger): Promise<boolean> {
  const now = (deps.now?.() ?? new Date()).toISOString();
  const { integration, kind, window } = moment;
  // The calls refused in the window, counted by every replica (each flushed them by END_TOLD_AFTER_MS).
  if (kind === 'brownout_ended') await deps.usage.flush();
  const details = await deps.store.transact(async (tx) => {
    if (!(await tx.schedules.recordMoment(integration.id, kind, moment.at, now))) return null;
    if ((await tx.states.get(integration.id)) === 'switched_off') return null;
    const refused =
      kind === 'brownout_ended'
        ? (await tx.states.brownoutRefusals(integration.id, BROWNOUT_ROWS_PER_INTEGRATION))
            .filter((r) => r.windowStart === window.start)
            .reduce((n, r) => n + r.calls, 0)
        : null;
    const details = { start: window.start, end: window.end, ...(refused === null ? {} : { refused_calls: refused }) };
    await move(tx, integration, kind, null, { actor: 'calendar' }, now, details);
    const about = aboutIntegration(integration);
    if (refused === null) await writeEvent(tx, 'brownout.started', integration.workspace.id, { ...about, window }, now);
    else
      await writeEvent(
        tx,
        'brownout.ended',
        integration.workspace.id,
        { ...about, window, refused_calls: refused },
        now,
      );
    return details;
  });
  if (details === null) return false;
  log.info({ integration: integration.handle, moment: kind, ...details }, kind.replace('_', ' '));
  return true;
}

/** How often each replica looks whether a migrating integration became ready: a verdict moves by hours. */
export const READINESS_EVERY_MS = 60_000;

/**
 * Tells each migrating integration whose readiness verdict is ready, once per ready spell: a spell is
 * known by the last legacy call before it (a new legacy call ends it, and the next spell is told
 * again). An audit entry `became_ready` (actor `calendar`) and an info log line; of several replicas
 * the first to record the moment tells it. Each look reads the integrations' states in one snapshot,
 * then a verdict per migrating integration (the report, its lists left out).
 */
export async function tellReady(deps: MigrationDeps, rules: RulesHolder, log: FastifyBaseLogger): Promise<number> {
  const integrations = [...rules.current().integrations.values()];
  const states = await deps.store.snapshot((r) => Promise.all(integrations.map((i) => r.states.get(i.id))));
  let toldNow = 0;
  for (const [n, integration] of integrations.entries()) {
    if (states[n] !== 'migrating') continue;
    const report = await migrationReport(deps, integration, DEFAULT_QUIET_PERIOD_HOURS, { unlinked: 0, notFound: 0 });
    if (report.readiness.verdict !== 'ready') continue;
    const spell = report.legacy.last_seen ?? 'never';
    const now = (deps.now?.() ?? new Date()).toISOString();
    const told = await deps.store.transact(async (tx) => {
      if (!(await tx.schedules.recordMoment(integration.id, 'became_ready', spell, now))) return false;
      await move(tx, integration, 'became_ready', null, { actor: 'calendar' }, now, {
        last_legacy_call: report.legacy.last_seen,
      });
      await writeEvent(
        tx,
        'integration.ready_for_switch_off',
        integration.workspace.id,
        {
          ...aboutIntegration(integration),
          last_legacy_call: report.legacy.last_seen,
        },
        now,
      );
      return true;
    });
    if (told) {
      toldNow++;
      log.info(
        { integration: integration.handle, last_legacy_call: report.legacy.last_seen },
        'integration ready for switch-off',
      );
    }
  }
  return toldNow;
}
