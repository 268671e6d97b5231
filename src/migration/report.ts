// The migration report per integration (docs/runbook.md, step 2): who still calls the old API, and is it ready.
import { z } from 'zod';
import type { Integration } from '../rules/catalog.js';
import { DEFAULT_QUIET_PERIOD_HOURS, type MigrationDeps } from './service.js';
import type { Interface, UsageRow } from '../store/repos/states.js';
import type { Lead } from '../store/repos/leads.js';
import type { Repos } from '../store/store.js';
import { NotFoundPageSchema, notFoundPage, PortedFlagSchema, portedView, UNLINKED_LEGACY_EXAMINED } from './porting.js';
import { BROWNOUT_ROWS_PER_INTEGRATION } from './usage.js';
import { BrownoutsSchema, brownoutsView } from './brownout-report.js';
import { asWindow } from './brownout-windows.js';
import { ScheduleViewSchema, scheduleView } from './schedule-view.js';

/** The answers 404s the report lists, the latest first; the rest page by page (GET .../not-found). */
export const REPORT_NOT_FOUND_ITEMS = 20;
/**
 * The unlinked legacy leads the report names, the first in the store's order; how many there are in
 * all is `unlinked_legacy_leads_total` (counted up to UNLINKED_LEGACY_EXAMINED). A report reads no more
 * leads than it names and counts no more than that, whatever the number of legacy leads
 * (docs/operations/limits.md, "Bounds on each request").
 */
export const REPORT_UNLINKED_ITEMS = 100;

const callCounts = {
  calls_24h: z.number().int().meta({ description: 'Calls in the current hour and the 24 before it' }),
  calls_7d: z.number().int(),
  last_seen: z.iso.datetime().nullable(),
  successful_7d: z.number().int().meta({ description: 'Calls answered with a 2xx in the last 7 days' }),
  last_success: z.iso.datetime().nullable().meta({ description: 'The last call ever answered with a 2xx' }),
};

export const RouteUsageSchema = z
  .object({ route: z.string().meta({ description: 'METHOD /path, e.g. POST /api/bots/api/leads/' }), ...callCounts })
  .meta({ id: 'RouteUsage' });
export type RouteUsage = z.infer<typeof RouteUsageSchema>;

const InterfaceUsageSchema = z
  .object({ routes: z.array(RouteUsageSchema), ...callCounts })
  .meta({ id: 'InterfaceUsage' });
type InterfaceUsage = z.infer<typeof InterfaceUsageSchema>;

export const MigrationReportSchema = z
  .object({
    integration: z.object({ id: z.uuid(), handle: z.string(), name: z.string() }),
    state: z.enum(['legacy', 'migrating', 'switched_off']),
    generated_at: z.iso.datetime(),
    legacy: InterfaceUsageSchema,
    v1: InterfaceUsageSchema,
    // Calls made with a test key: counted apart, never as v1 traffic for the readiness verdict.
    v1_test: InterfaceUsageSchema,
    ignored_legacy_fields: z.array(
      z.object({ field: z.string(), calls: z.number().int(), last_seen: z.iso.datetime() }),
    ),
    unlinked_legacy_leads: z
      .array(z.object({ lead_id: z.uuid(), first_name: z.string(), created_at: z.iso.datetime() }))
      .meta({
        description: `Legacy-created leads not linked to the integration: the first ${REPORT_UNLINKED_ITEMS} (re-run linking to bind them)`,
      }),
    unlinked_legacy_leads_total: z
      .number()
      .int()
      .meta({
        description: `How many unlinked legacy leads there are in all, counted up to ${UNLINKED_LEGACY_EXAMINED} (see \`unlinked_legacy_leads_total_capped\`)`,
      }),
    unlinked_legacy_leads_total_capped: z.boolean().meta({
      description: `True: there are more than ${UNLINKED_LEGACY_EXAMINED} unlinked legacy leads, and \`unlinked_legacy_leads_total\` stopped counting there`,
    }),
    keys: z
      .object({ v1: z.number().int(), legacy: z.number().int(), test: z.number().int() })
      .meta({ description: 'Live (not revoked) keys' }),
    ported: PortedFlagSchema.nullable(),
    answers_not_found: NotFoundPageSchema.meta({
      description: `Answers calls answered 404, per external_contact_id: the latest ${REPORT_NOT_FOUND_ITEMS}; \`next\` pages on at GET .../not-found`,
    }),
    brownouts: BrownoutsSchema,
    switch_off_schedule: ScheduleViewSchema.nullable().meta({
      description:
        'The scheduled switch-off, pending or how it ended (PUT .../switch-off/schedule); null: never scheduled',
    }),
    readiness: z.object({ verdict: z.enum(['ready', 'not_ready', 'switched_off']), reasons: z.array(z.string()) }),
  })
  .meta({ id: 'MigrationReport' });
export type MigrationReport = z.infer<typeof MigrationReportSchema>;

const latest = (values: (string | null)[]) =>
  values.reduce<string | null>((max, v) => (v !== null && (max === null || v > max) ? v : max), null);

const hourOf = (date: Date) => date.toISOString().slice(0, 13);

function summarise(iface: Interface, day: UsageRow[], week: UsageRow[]): InterfaceUsage {
  const routes = new Map<string, RouteUsage>();
  for (const row of week.filter((r) => r.interface === iface)) {
    routes.set(row.route, {
      route: row.route,
      calls_24h: 0,
      calls_7d: row.calls,
      last_seen: row.lastSeen,
      successful_7d: row.okCalls,
      last_success: row.lastOk,
    });
  }
  for (const row of day.filter((r) => r.interface === iface)) {
    const entry = routes.get(row.route);
    if (entry) entry.calls_24h = row.calls;
  }
  const list = [...routes.values()].sort((a, b) => a.route.localeCompare(b.route));
  return {
    routes: list,
    calls_24h: list.reduce((n, r) => n + r.calls_24h, 0),
    calls_7d: list.reduce((n, r) => n + r.calls_7d, 0),
    last_seen: latest(list.map((r) => r.last_seen)),
    successful_7d: list.reduce((n, r) => n + r.successful_7d, 0),
    last_success: latest(list.map((r) => r.last_success)),
  };
}

/** The reasons with the told lines put in at their places (each after the reasons before it). */
function withTold(reasons: string[], told: { at: number; text: string }[]): string[] {
  const out = [...reasons];
  for (const t of [...told].reverse()) out.splice(t.at, 0, t.text);
  return out;
}

/** The first `listed` unlinked legacy leads, and a count of them made by the database up to UNLINKED_LEGACY_EXAMINED. */
async function unlinkedLeads(
  r: Repos,
  integration: Integration,
  listed: number,
): Promise<{ leads: Lead[]; count: number; capped: boolean }> {
  const counted = await r.leads.countUnlinkedLegacy(integration.id, UNLINKED_LEGACY_EXAMINED + 1);
  const count = Math.min(counted, UNLINKED_LEGACY_EXAMINED);
  return {
    leads: count === 0 || listed === 0 ? [] : await r.leads.listLegacy(integration.id, true, listed),
    count,
    capped: counted > count,
  };
}

/** How much of each list a report names: what it reads is bounded by what it names. */
export interface ReportLists {
  /** Unlinked legacy leads named (`unlinked_legacy_leads`); all are counted. */
  unlinked: number;
  /** Answers 404s named (`answers_not_found.items`), with the unlinked legacy leads of each; all are counted. */
  notFound: number;
}

/** The admin API's and the CLI's report; the console's pages name fewer (the overview none). */
export const FULL_REPORT: ReportLists = { unlinked: REPORT_UNLINKED_ITEMS, notFound: REPORT_NOT_FOUND_ITEMS };

/** The report of an integration, naming `lists` of its lists. */
export async function migrationReport(
  deps: MigrationDeps,
  integration: Integration,
  quietPeriodHours = DEFAULT_QUIET_PERIOD_HOURS,
  lists: ReportLists = FULL_REPORT,
): Promise<MigrationReport> {
  await deps.usage.flush();
  const now = deps.now?.() ?? new Date();
  // `snapshot`: one snapshot, and on SQLite the reader connection: a report never waits for the one writer
  // nor holds it, so other integrations' units go on (`readOne` would run on the writer).
  const data = await deps.store.snapshot(async (r) => ({
    state: await r.states.get(integration.id),
    // Counted per hour: "24 h" is the current hour and the 24 before it.
    day: await r.states.usageSince(integration.id, hourOf(new Date(now.getTime() - 24 * 3_600_000))),
    week: await r.states.usageSince(integration.id, hourOf(new Date(now.getTime() - 7 * 24 * 3_600_000))),
    ignored: await r.states.ignoredFields(integration.id),
    unlinked: await unlinkedLeads(r, integration, lists.unlinked),
    keys: (await r.keys.listForIntegration(integration.id)).filter((k) => k.revokedAt === null),
    ported: await r.states.ported(integration.id),
    notFound: await notFoundPage(r, integration, lists.notFound, null, deps.usage.caps.notFoundIdsPerIntegration),
    refused: await r.states.brownoutRefusals(integration.id, BROWNOUT_ROWS_PER_INTEGRATION),
    schedule: await r.schedules.get(integration.id),
    stored: await r.brownouts.list(integration.id),
  }));
  const legacy = summarise('legacy', data.day, data.week);
  const v1 = summarise('v1', data.day, data.week);
  // Test calls show the bot author at work; they are not the bot's traffic, so no verdict reads them.
  const v1Test = summarise('v1-test', data.day, data.week);
  const quietSince = new Date(now.getTime() - quietPeriodHours * 3_600_000).toISOString();

  const reasons: string[] = [];
  if (data.state === 'legacy') reasons.push('no v1 key has been issued yet');
  if (legacy.last_seen !== null && legacy.last_seen > quietSince) {
    reasons.push(
      `the deprecated interface was called at ${legacy.last_seen}, within the ${quietPeriodHours} h quiet period`,
    );
  }
  // The flag is said beside the traffic, never weighed: the verdict is the traffic's (docs/runbook.md).
  const told: { at: number; text: string }[] = [];
  if (data.ported !== null) {
    const p = data.ported;
    told.push({
      at: reasons.length,
      text: `marked ported by ${p.by} at ${p.at}${p.note === null ? '' : `: ${p.note}`}`,
    });
    if (legacy.last_seen !== null && legacy.last_seen > p.at) {
      told.push({
        at: reasons.length,
        text: `warning: the deprecated interface was called after the integration was marked ported (last at ${legacy.last_seen})`,
      });
    }
  }
  // A run of 422s shows a bot that calls, not one that works: only an accepted call counts.
  if (data.state !== 'switched_off' && v1.last_success === null) {
    reasons.push(
      v1.last_seen === null
        ? 'the v1 interface has not been called yet'
        : 'no v1 call has succeeded yet (every one was refused)',
    );
  }
  if (data.unlinked.count > 0)
    reasons.push(
      `${data.unlinked.capped ? 'more than ' : ''}${data.unlinked.count} legacy lead(s) are not linked: their answers would get 404`,
    );

  const report: MigrationReport = {
    integration: { id: integration.id, handle: integration.handle, name: integration.name },
    state: data.state,
    generated_at: now.toISOString(),
    legacy,
    v1,
    v1_test: v1Test,
    ignored_legacy_fields: data.ignored.map((f) => ({ field: f.field, calls: f.calls, last_seen: f.lastSeen })),
    unlinked_legacy_leads: data.unlinked.leads.map((l) => ({
      lead_id: l.id,
      first_name: l.firstName,
      created_at: l.createdAt,
    })),
    unlinked_legacy_leads_total: data.unlinked.count,
    unlinked_legacy_leads_total_capped: data.unlinked.capped,
    keys: {
      v1: data.keys.filter((k) => k.kind === 'v1').length,
      legacy: data.keys.filter((k) => k.kind === 'legacy').length,
      test: data.keys.filter((k) => k.kind === 'test').length,
    },
    ported: portedView(data.ported),
    answers_not_found: data.notFound,
    brownouts: brownoutsView([...integration.legacy.brownouts, ...data.stored.map(asWindow)], data.refused, now),
    switch_off_schedule: data.schedule === null ? null : scheduleView(data.schedule),
    readiness: {
      verdict: data.state === 'switched_off' ? 'switched_off' : reasons.length === 0 ? 'ready' : 'not_ready',
      reasons: withTold(reasons, told),
    },
  };
  return report;
}
