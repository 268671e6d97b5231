// The migration report per integration (contract 6): who still calls the old API, and is it ready.
import type { Integration } from '../rules/catalog.js';
import { DEFAULT_QUIET_PERIOD_HOURS, type MigrationDeps } from './service.js';
import type { MigrationState, UsageRow } from './state-store.js';

export interface RouteUsage {
  route: string;
  calls_24h: number;
  calls_7d: number;
  last_seen: string | null;
  /** Calls answered with a 2xx in the last 7 days, and the last of them ever. */
  successful_7d: number;
  last_success: string | null;
}

export interface MigrationReport {
  integration: { id: string; handle: string; name: string };
  state: MigrationState;
  generated_at: string;
  legacy: InterfaceUsage;
  v1: InterfaceUsage;
  ignored_legacy_fields: { field: string; calls: number; last_seen: string }[];
  unlinked_legacy_leads: { lead_id: string; first_name: string; created_at: string }[];
  keys: { v1: number; legacy: number };
  readiness: { verdict: 'ready' | 'not_ready' | 'switched_off'; reasons: string[] };
}

interface InterfaceUsage {
  routes: RouteUsage[];
  calls_24h: number;
  calls_7d: number;
  last_seen: string | null;
  successful_7d: number;
  last_success: string | null;
}

const latest = (values: (string | null)[]) => values.reduce<string | null>((max, v) => (v !== null && (max === null || v > max) ? v : max), null);

const hourOf = (date: Date) => date.toISOString().slice(0, 13);

function summarise(iface: 'v1' | 'legacy', day: UsageRow[], week: UsageRow[]): InterfaceUsage {
  const routes = new Map<string, RouteUsage>();
  for (const row of week.filter((r) => r.interface === iface)) {
    routes.set(row.route, { route: row.route, calls_24h: 0, calls_7d: row.calls, last_seen: row.lastSeen, successful_7d: row.okCalls, last_success: row.lastOk });
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

export async function migrationReport(deps: MigrationDeps, integration: Integration, quietPeriodHours = DEFAULT_QUIET_PERIOD_HOURS): Promise<MigrationReport> {
  await deps.usage.flush();
  const now = deps.now?.() ?? new Date();
  const data = await deps.store.read(async (r) => ({
    state: await r.states.get(integration.id),
    // Counted per hour: "24 h" is the current hour and the 24 before it.
    day: await r.states.usageSince(integration.id, hourOf(new Date(now.getTime() - 24 * 3_600_000))),
    week: await r.states.usageSince(integration.id, hourOf(new Date(now.getTime() - 7 * 24 * 3_600_000))),
    ignored: await r.states.ignoredFields(integration.id),
    unlinked: await r.leads.listLegacy(integration.id, true),
    keys: (await r.keys.listForIntegration(integration.id)).filter((k) => k.revokedAt === null),
  }));
  const legacy = summarise('legacy', data.day, data.week);
  const v1 = summarise('v1', data.day, data.week);
  const quietSince = new Date(now.getTime() - quietPeriodHours * 3_600_000).toISOString();

  const reasons: string[] = [];
  if (data.state === 'legacy') reasons.push('no v1 key has been issued yet');
  if (legacy.last_seen !== null && legacy.last_seen > quietSince) {
    reasons.push(`the deprecated interface was called at ${legacy.last_seen}, within the ${quietPeriodHours} h quiet period`);
  }
  // A run of 422s shows a bot that calls, not one that works: only an accepted call counts.
  if (data.state !== 'switched_off' && v1.last_success === null) {
    reasons.push(v1.last_seen === null ? 'the v1 interface has not been called yet' : 'no v1 call has succeeded yet (every one was refused)');
  }
  if (data.unlinked.length > 0) reasons.push(`${data.unlinked.length} legacy lead(s) are not linked: their answers would get 404`);

  return {
    integration: { id: integration.id, handle: integration.handle, name: integration.name },
    state: data.state,
    generated_at: now.toISOString(),
    legacy,
    v1,
    ignored_legacy_fields: data.ignored.map((f) => ({ field: f.field, calls: f.calls, last_seen: f.lastSeen })),
    unlinked_legacy_leads: data.unlinked.map((l) => ({ lead_id: l.id, first_name: l.firstName, created_at: l.createdAt })),
    keys: { v1: data.keys.filter((k) => k.kind === 'v1').length, legacy: data.keys.filter((k) => k.kind === 'legacy').length },
    readiness: { verdict: data.state === 'switched_off' ? 'switched_off' : reasons.length === 0 ? 'ready' : 'not_ready', reasons },
  };
}
