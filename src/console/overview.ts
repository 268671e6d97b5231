// The integrations overview: one row per integration the viewer may see, from the migration report
// (src/migration/report.ts: the same numbers as the admin API and the CLI), and the fleet's progress.
import { z } from 'zod';
import { AppError } from '../errors.js';
import type { Integration, Rules } from '../rules/catalog.js';
import { migrationReport, type MigrationReport } from '../migration/report.js';
import type { MigrationDeps } from '../migration/service.js';
import type { Viewer } from './users.js';

const STATES = ['legacy', 'migrating', 'switched_off'] as const;
const VERDICTS = ['ready', 'not_ready', 'switched_off'] as const;
export const SORT_COLUMNS = [
  'integration',
  'workspace',
  'state',
  'legacy_24h',
  'legacy_7d',
  'last_legacy',
  'v1_7d',
  'verdict',
] as const;
export type SortColumn = (typeof SORT_COLUMNS)[number];

/**
 * A filter left empty: the form's "All" option sends `workspace=`, an empty search box `q=`. Either
 * means no filter, not a workspace or a name that is the empty string.
 */
const unlessEmpty = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => (v === '' ? undefined : v), schema.optional()).catch(undefined);

/**
 * The overview's query: filters and the sort, all in the URL so that the page works without script and
 * a view can be bookmarked. A value the page does not know is ignored rather than refused: these URLs
 * are typed and shared by people.
 */
export const OverviewQuerySchema = z.object({
  workspace: unlessEmpty(z.string().max(64)),
  state: unlessEmpty(z.enum(STATES)),
  verdict: unlessEmpty(z.enum(VERDICTS)),
  q: unlessEmpty(z.string().max(100)),
  /** Marked ported by the owner or the service team (yes) or not (no); empty: all. */
  ported: unlessEmpty(z.enum(['yes', 'no'])),
  sort: z.enum(SORT_COLUMNS).default('integration').catch('integration'),
  order: z.enum(['asc', 'desc']).default('asc').catch('asc'),
});
export type OverviewQuery = z.infer<typeof OverviewQuerySchema>;

export interface OverviewRow {
  handle: string;
  name: string;
  workspace: { slug: string; name: string };
  state: MigrationReport['state'];
  keys: MigrationReport['keys'];
  legacy24h: number;
  legacy7d: number;
  lastLegacy: string | null;
  v17d: number;
  verdict: MigrationReport['readiness']['verdict'];
  reasons: string[];
  /** The date the deprecated interface ends for it (its rules' `legacy.sunset`), or null when none is set. */
  sunset: string | null;
  /** Legacy state and no live key of either kind: the migration has not started (no legacy key imported). */
  notStarted: boolean;
  /** The next moment of its calendar: a brownout running or to come, or its scheduled switch-off; null: none. */
  nextMoment: { what: 'brownout until' | 'brownout at' | 'switch-off at'; at: string } | null;
  /** Calls made with a v1 test key in 7 days: the bot author is testing (never v1 traffic). */
  test7d: number;
  /** The "ported" flag (src/migration/porting.ts), or null when not marked. */
  ported: MigrationReport['ported'];
}

export interface FleetSummary {
  integrations: number;
  byState: Record<MigrationReport['state'], number>;
  /** Of byState.legacy, those with no live key at all: nothing imported or issued yet. */
  notStarted: number;
  legacyCalls7d: number;
  v1Calls7d: number;
  /** Legacy calls as a share of all calls in the last 7 days, 0-1; null when there were no calls. */
  legacyShare7d: number | null;
}

/** The integrations a viewer may see: all for the service team, their workspace's for a workspace owner. */
export const visibleIntegrations = (rules: Rules, viewer: Viewer): Integration[] =>
  [...rules.integrations.values()].filter((i) => viewer.workspace === null || i.workspace.slug === viewer.workspace);

/**
 * An integration the viewer may see, by id or handle. One outside their workspace is "not found",
 * word for word as one that does not exist: the console does not tell which integrations exist elsewhere.
 */
export function integrationForViewer(rules: Rules, viewer: Viewer, ref: string): Integration {
  const integration = rules.findIntegration(ref);
  if (!integration || (viewer.workspace !== null && integration.workspace.slug !== viewer.workspace))
    throw new AppError('not-found', `No integration "${ref}".`);
  return integration;
}

/**
 * The earliest of a brownout (one running comes first), of the rules or stored (the report lists both),
 * and the pending switch-off's next attempt.
 */
function nextOf(r: MigrationReport): OverviewRow['nextMoment'] {
  const running = r.brownouts.find((w) => w.status === 'running' && w.end !== null);
  if (running) return { what: 'brownout until', at: running.end! };
  const brownout = r.brownouts.find((w) => w.status === 'scheduled') ?? null;
  const schedule = r.switch_off_schedule?.next_attempt_at ?? null;
  if (brownout !== null && (schedule === null || brownout.start <= schedule))
    return { what: 'brownout at', at: brownout.start };
  return schedule === null ? null : { what: 'switch-off at', at: schedule };
}

const toRow = (i: Integration, r: MigrationReport): OverviewRow => ({
  handle: i.handle,
  name: i.name,
  workspace: { slug: i.workspace.slug, name: i.workspace.name },
  state: r.state,
  keys: r.keys,
  legacy24h: r.legacy.calls_24h,
  legacy7d: r.legacy.calls_7d,
  lastLegacy: r.legacy.last_seen,
  v17d: r.v1.calls_7d,
  verdict: r.readiness.verdict,
  reasons: r.readiness.reasons,
  sunset: i.legacy.sunset,
  nextMoment: r.state === 'switched_off' ? null : nextOf(r),
  notStarted: r.state === 'legacy' && r.keys.v1 === 0 && r.keys.legacy === 0 && r.keys.test === 0,
  test7d: r.v1_test.calls_7d,
  ported: r.ported,
});

const sortKey: Record<SortColumn, (r: OverviewRow) => string | number> = {
  integration: (r) => r.handle,
  workspace: (r) => `${r.workspace.slug}\u0000${r.handle}`,
  state: (r) => STATES.indexOf(r.state),
  legacy_24h: (r) => r.legacy24h,
  legacy_7d: (r) => r.legacy7d,
  last_legacy: (r) => r.lastLegacy ?? '',
  v1_7d: (r) => r.v17d,
  verdict: (r) => VERDICTS.indexOf(r.verdict),
};

export function summariseFleet(rows: OverviewRow[]): FleetSummary {
  const byState = { legacy: 0, migrating: 0, switched_off: 0 };
  for (const row of rows) byState[row.state] += 1;
  const legacyCalls7d = rows.reduce((n, r) => n + r.legacy7d, 0);
  const v1Calls7d = rows.reduce((n, r) => n + r.v17d, 0);
  const total = legacyCalls7d + v1Calls7d;
  const notStarted = rows.filter((r) => r.notStarted).length;
  return {
    integrations: rows.length,
    byState,
    notStarted,
    legacyCalls7d,
    v1Calls7d,
    legacyShare7d: total === 0 ? null : legacyCalls7d / total,
  };
}

/** The rows the query asks for, sorted, and the summary of every integration the viewer may see. */
export async function integrationsOverview(
  deps: MigrationDeps & { rules: Rules },
  viewer: Viewer,
  query: OverviewQuery,
): Promise<{ rows: OverviewRow[]; fleet: FleetSummary }> {
  const all: OverviewRow[] = [];
  // A row says how many legacy leads are unlinked (its reasons), never which: none is listed.
  for (const integration of visibleIntegrations(deps.rules, viewer))
    all.push(toRow(integration, await migrationReport(deps, integration, undefined, { unlinked: 0, notFound: 0 })));
  const needle = query.q?.toLowerCase();
  const rows = all.filter(
    (r) =>
      (query.workspace === undefined || r.workspace.slug === query.workspace) &&
      (query.state === undefined || r.state === query.state) &&
      (query.verdict === undefined || r.verdict === query.verdict) &&
      (query.ported === undefined || (r.ported !== null) === (query.ported === 'yes')) &&
      (needle === undefined || `${r.handle} ${r.name}`.toLowerCase().includes(needle)),
  );
  const key = sortKey[query.sort];
  const direction = query.order === 'asc' ? 1 : -1;
  // Ties keep the handle order, so a sort by a count is stable from one load to the next.
  rows.sort((a, b) => {
    const x = key(a);
    const y = key(b);
    return (x < y ? -1 : x > y ? 1 : 0) * direction || a.handle.localeCompare(b.handle);
  });
  return { rows, fleet: summariseFleet(all) };
}
