// Both engines side by side: each path's SQLite and PostgreSQL figures of the same run, their ratios,
// and the targets PostgreSQL must meet as ratios to SQLite (docs/performance.md, "What one run does").
import type { Goal } from './goals.js';
import { targetTable } from './goals.js';
import type { Figures } from './measure.js';

/** A new lead's outcome on PostgreSQL, sent alone a number of times on the warm gateway (bench/outcomes.ts). */
export interface OutcomeProbe {
  outcome: 'created' | 'attached' | 'reactivated';
  requests: number;
  /** The median request's round trips (the gateway's counter), or null without the counter. */
  round_trips: number | null;
  /** The median request's statements (pg_stat_statements), or null without the extension. */
  statements: number | null;
}

/** The four paths, each with its SQLite and its PostgreSQL scenario. */
export const ENGINE_PATHS = [
  { path: 'new lead', sqlite: 'newLead', postgres: 'newLeadPg' },
  { path: 'replay', sqlite: 'replay', postgres: 'replayPg' },
  { path: 'answers', sqlite: 'answers', postgres: 'answersPg' },
  { path: 'legacy POST leads/', sqlite: 'legacy', postgres: 'legacyPg' },
] as const;

/**
 * Where the SQLite gateway's CPU per request stood against the echo's in three runs before these
 * targets (docs/performance.md): no regression means staying within 10% above the band's top.
 */
export const SQLITE_BANDS = { newLead: { low: 8.1, high: 9.0 }, replay: { low: 7.1, high: 8.0 } } as const;
const WITHIN = 1.1;

const ratio = (a: number | null | undefined, b: number | null | undefined) =>
  a == null || b == null || b === 0 ? null : Math.round((a / b) * 100) / 100;
const cell = (v: number | null | undefined) => (v == null ? '–' : String(v));

/** A round-trip figure for a target: the counter's, or the statements when the gateway has no counter. */
const trips = (roundTrips: number | null | undefined, statements: number | null | undefined) =>
  roundTrips != null
    ? { value: roundTrips, note: '' }
    : { value: statements ?? null, note: ' (statements: no round-trip counter)' };

/** The targets of the engines comparison, each a ratio within this run (or a count). */
export function engineGoals(f: Record<string, Figures | undefined>, probes: OutcomeProbe[]): Goal[] {
  const [lite, pg, liteReplay, pgReplay, echo] = [f.newLead, f.newLeadPg, f.replay, f.replayPg, f.echo];
  const goals: Goal[] = [];
  if (lite && pg) {
    goals.push(
      {
        name: 'PostgreSQL / SQLite new lead, gateway CPU',
        value: ratio(pg.cpu_us, lite.cpu_us),
        limit: 1.8,
        kind: 'max',
      },
      { name: 'PostgreSQL / SQLite new lead, req/s', value: ratio(pg.rps, lite.rps), limit: 0.45, kind: 'min' },
      { name: 'PostgreSQL / SQLite new lead, p99', value: ratio(pg.p99_ms, lite.p99_ms), limit: 2, kind: 'max' },
    );
  }
  if (liteReplay && pgReplay)
    goals.push({
      name: 'PostgreSQL / SQLite replay, gateway CPU',
      value: ratio(pgReplay.cpu_us, liteReplay.cpu_us),
      limit: 1.2,
      kind: 'max',
    });
  if (lite && pg)
    goals.push({
      name: "PostgreSQL's own CPU per new lead / SQLite gateway CPU per new lead",
      value: ratio(pg.pg_cpu_us, lite.cpu_us),
      limit: 1.6,
      kind: 'max',
    });
  const perRequest: [string, { round_trips: number | null; statements: number | null } | undefined, number][] = [
    ['new lead, created', pg, 2],
    ...probes
      .filter((p) => p.outcome !== 'created')
      .map((p): [string, OutcomeProbe, number] => [`new lead, ${p.outcome} (alone)`, p, 2]),
    ['answers', f.answersPg, 2],
    ['legacy POST leads/', f.legacyPg, 2],
    ['replay', pgReplay, 1],
  ];
  for (const [what, figures, limit] of perRequest) {
    if (!figures) continue;
    const { value, note } = trips(figures.round_trips, figures.statements);
    goals.push({ name: `PostgreSQL round trips per ${what}${note}`, value, limit, kind: 'max' });
  }
  // One unit's shape (docs/architecture.md, "The unit of work: one shape"): BEGIN, the hold, the
  // write, the answer's read, COMMIT. pg_stat_statements counts them under load.
  for (const [what, figures] of [
    ['new lead, created', pg],
    ['answers', f.answersPg],
    ['legacy POST leads/', f.legacyPg],
  ] as const) {
    if (figures?.statements == null) continue;
    goals.push({ name: `PostgreSQL statements per ${what}`, value: figures.statements, limit: 5, kind: 'max' });
  }
  if (echo) {
    for (const [key, path] of [
      ['newLead', 'new lead'],
      ['replay', 'replay'],
    ] as const) {
      const band = SQLITE_BANDS[key];
      if (!f[key]) continue;
      goals.push({
        name: `SQLite ${path} / echo, gateway CPU (${band.low.toFixed(1)}-${band.high.toFixed(1)} before: within 10%)`,
        value: ratio(f[key].cpu_us, echo.cpu_us),
        limit: Math.round(band.high * WITHIN * 100) / 100,
        kind: 'max',
      });
    }
  }
  return goals;
}

/** The side-by-side table, the outcomes sent alone, and the targets; nothing when PostgreSQL was not measured. */
export function enginesSection(f: Record<string, Figures | undefined>, probes: OutcomeProbe[]): string[] {
  const paths = ENGINE_PATHS.filter((p) => f[p.sqlite] && f[p.postgres]);
  const goals = engineGoals(f, probes);
  if (goals.length === 0) return [];
  const rows = paths.map(({ path, sqlite, postgres }) => {
    const [s, p] = [f[sqlite]!, f[postgres]!];
    return `| ${path} | ${cell(s.cpu_us)} | ${cell(p.cpu_us)} | ${cell(ratio(p.cpu_us, s.cpu_us))} | ${cell(p.pg_cpu_us)} | ${cell(p.round_trips)} | ${cell(p.statements)} | ${s.rps} | ${p.rps} | ${cell(ratio(p.rps, s.rps))} | ${s.p99_ms} | ${p.p99_ms} | ${cell(ratio(p.p99_ms, s.p99_ms))} |`;
  });
  const lines = ['## Both engines side by side', ''];
  if (paths.length === 0) lines.push('PostgreSQL was not measured: the SQLite targets only.', '');
  else {
    lines.push(
      "Each path on SQLite (synchronous=FULL) and on PostgreSQL in the same rounds, the same bodies. SQLite has no round trips and no server of its own: those columns are PostgreSQL's. Round trips: the gateway's own counter (`lead_gateway_postgres_round_trips_total` on /metrics, each moment a request waits for the database before sending more), '–' when the gateway has none; statements: pg_stat_statements, `BEGIN` and `COMMIT` included.",
      '',
      '| path | SQLite gateway CPU µs/req | PostgreSQL gateway CPU µs/req | × SQLite | PostgreSQL server CPU µs/req | round trips/req | statements/req | SQLite req/s | PostgreSQL req/s | × SQLite | SQLite p99 ms | PostgreSQL p99 ms | × SQLite |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
      ...rows,
      '',
    );
  }
  if (probes.length > 0) {
    lines.push(
      "A new lead's three outcomes on PostgreSQL, each sent alone on the warm gateway (the median request):",
      '',
      '| outcome | requests | round trips/req | statements/req |',
      '|---|---:|---:|---:|',
      ...probes.map((p) => `| ${p.outcome} | ${p.requests} | ${cell(p.round_trips)} | ${cell(p.statements)} |`),
      '',
    );
  }
  lines.push('Targets of the engines comparison, as ratios within this run:', '', ...targetTable(goals, true), '');
  return lines;
}
