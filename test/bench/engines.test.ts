// The bench's engines comparison reads what it says: the round-trip counter summed from a gateway's
// /metrics text (absent on a gateway without it), and the side-by-side report's ratios, limits and
// misses computed from given figures, with the statements standing in for round trips, said so, when
// the counter is absent. Pure functions: no server, no wrk.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { ENGINE_PATHS, engineGoals, enginesSection, type OutcomeProbe } from '../../bench/engines.js';
import { missedBy, targetTable } from '../../bench/goals.js';
import type { Figures } from '../../bench/measure.js';
import { ROUND_TRIPS_COUNTER, countPerRequest, counterSum } from '../../bench/prometheus.js';
import { report } from '../../bench/report.js';

const METRICS = `# HELP lead_gateway_http_requests_total HTTP requests by route and status
# TYPE lead_gateway_http_requests_total counter
lead_gateway_http_requests_total{method="POST",route="/api/integrations/v1/leads/",status="201"} 1200
lead_gateway_http_requests_total{method="GET",route="/metrics",status="200"} 7
lead_gateway_http_requests_total{method="GET",route="/a {b} c",status="200"} 3
# HELP lead_gateway_postgres_round_trips_total Round trips to PostgreSQL
# TYPE lead_gateway_postgres_round_trips_total counter
lead_gateway_postgres_round_trips_total{pool="intake"} 2400
lead_gateway_postgres_round_trips_total{pool="rate-limit"} 1200 1764000000000
lead_gateway_postgres_round_trips_total_extra 99
`;

describe('the bench reading /metrics', () => {
  it('sums a counter over its label sets, leaves out what `skip` accepts, ignores comments and longer names', () => {
    expect(counterSum(METRICS, ROUND_TRIPS_COUNTER)).toBe(3600);
    expect(
      counterSum(METRICS, 'lead_gateway_http_requests_total', (labels) => labels.includes('route="/metrics"')),
    ).toBe(1203);
    expect(counterSum('lead_gateway_unlabelled 5\n', 'lead_gateway_unlabelled')).toBe(5);
  });

  it('answers null for a counter the gateway does not expose, and a per-request figure only when both ends are known', () => {
    const withoutCounter = METRICS.split('\n')
      .filter((line) => !line.startsWith(ROUND_TRIPS_COUNTER))
      .join('\n');
    expect(counterSum(withoutCounter, ROUND_TRIPS_COUNTER)).toBeNull();
    expect(countPerRequest(3600, 4600, 400)).toBe(2.5);
    expect(countPerRequest(0, 1000, 3)).toBe(333.33);
    expect(countPerRequest(null, 4600, 400)).toBeNull();
    expect(countPerRequest(3600, 4600, 0)).toBeNull();
  });
});

const figures = (scenario: string, values: Partial<Figures>): Figures => ({
  scenario,
  requests: 1000,
  sent: 1000,
  rps: 1000,
  p50_ms: 10,
  p99_ms: 20,
  errors: 0,
  non_2xx: 0,
  peak_rss_mb: 100,
  cpu_us: 100,
  pg_cpu_us: null,
  round_trips: null,
  statements: null,
  pg_states: null,
  ...values,
});

/** A run where PostgreSQL meets some targets and misses others; `trips` null: a gateway without the counter. */
function run(trips: number | null): Record<string, Figures> {
  return {
    echo: figures('echo baseline', { cpu_us: 30 }),
    newLead: figures('v1 new lead (FULL)', { cpu_us: 270, rps: 3000, p99_ms: 30 }),
    replay: figures('v1 replay', { cpu_us: 250, rps: 3500, p99_ms: 25 }),
    answers: figures('v1 answers', { cpu_us: 260 }),
    legacy: figures('legacy POST leads/', { cpu_us: 280 }),
    newLeadPg: figures('v1 new lead (PostgreSQL)', {
      cpu_us: 1350,
      rps: 600,
      p99_ms: 120,
      pg_cpu_us: 1080,
      round_trips: trips,
      statements: 8.04,
    }),
    replayPg: figures('v1 replay (PostgreSQL)', {
      cpu_us: 300,
      pg_cpu_us: 200,
      round_trips: trips === null ? null : 1,
      statements: 4,
    }),
    answersPg: figures('v1 answers (PostgreSQL)', { cpu_us: 900, round_trips: trips, statements: 8 }),
    legacyPg: figures('legacy POST leads/ (PostgreSQL)', { cpu_us: 1400, round_trips: trips, statements: 8.1 }),
  };
}

const probes = (trips: number | null): OutcomeProbe[] => [
  { outcome: 'created', requests: 15, round_trips: trips, statements: 8 },
  { outcome: 'attached', requests: 15, round_trips: trips === null ? null : 3, statements: 13 },
  { outcome: 'reactivated', requests: 15, round_trips: trips === null ? null : 2, statements: 14 },
];

describe('the bench engines comparison', () => {
  it('sets each ratio against its limit and says by how much a missed one is off', () => {
    const goals = Object.fromEntries(engineGoals(run(2), probes(2)).map((g) => [g.name, g]));
    expect(goals['PostgreSQL / SQLite new lead, gateway CPU']).toMatchObject({ value: 5, limit: 1.8, kind: 'max' });
    expect(missedBy(goals['PostgreSQL / SQLite new lead, gateway CPU']!)).toBe('178% over');
    expect(goals['PostgreSQL / SQLite new lead, req/s']).toMatchObject({ value: 0.2, limit: 0.45, kind: 'min' });
    expect(missedBy(goals['PostgreSQL / SQLite new lead, req/s']!)).toBe('56% under');
    expect(goals['PostgreSQL / SQLite new lead, p99']).toMatchObject({ value: 4, limit: 2 });
    expect(goals['PostgreSQL / SQLite replay, gateway CPU']).toMatchObject({ value: 1.2, limit: 1.2 });
    expect(missedBy(goals['PostgreSQL / SQLite replay, gateway CPU']!)).toBe('');
    expect(goals["PostgreSQL's own CPU per new lead / SQLite gateway CPU per new lead"]).toMatchObject({
      value: 4,
      limit: 1.6,
    });
    expect(goals['PostgreSQL statements per new lead, created']).toMatchObject({ value: 8.04, limit: 5 });
    expect(missedBy(goals['PostgreSQL statements per new lead, created']!)).toBe('61% over');
    expect(goals['PostgreSQL statements per answers']).toMatchObject({ value: 8, limit: 5 });
    expect(goals['PostgreSQL statements per legacy POST leads/']).toMatchObject({ value: 8.1, limit: 5 });
    expect(goals['PostgreSQL round trips per new lead, created']).toMatchObject({ value: 2, limit: 2 });
    expect(goals['PostgreSQL round trips per new lead, attached (alone)']).toMatchObject({ value: 3, limit: 2 });
    expect(goals['PostgreSQL round trips per new lead, reactivated (alone)']).toMatchObject({ value: 2, limit: 2 });
    expect(goals['PostgreSQL round trips per answers']).toMatchObject({ value: 2, limit: 2 });
    expect(goals['PostgreSQL round trips per legacy POST leads/']).toMatchObject({ value: 2, limit: 2 });
    expect(goals['PostgreSQL round trips per replay']).toMatchObject({ value: 1, limit: 1 });
    // No regression on SQLite: within 10% above the band measured before.
    expect(goals['SQLite new lead / echo, gateway CPU (8.1-9.0 before: within 10%)']).toMatchObject({
      value: 9,
      limit: 9.9,
    });
    expect(goals['SQLite replay / echo, gateway CPU (7.1-8.0 before: within 10%)']).toMatchObject({
      value: 8.33,
      limit: 8.8,
    });
  });

  it('prints one row per path on both engines, the outcomes, and the targets met or missed', () => {
    const text = enginesSection(run(2), probes(2)).join('\n');
    expect(text).toContain('| new lead | 270 | 1350 | 5 | 1080 | 2 | 8.04 | 3000 | 600 | 0.2 | 30 | 120 | 4 |');
    expect(text).toContain('| replay | 250 | 300 | 1.2 | 200 | 1 | 4 | 3500 | 1000 | 0.29 | 25 | 20 | 0.8 |');
    expect(text).toContain('| legacy POST leads/ | 280 | 1400 | 5 |');
    for (const { path } of ENGINE_PATHS) expect(text).toMatch(new RegExp(`^\\| ${path.replace('/', '\\/')} \\|`, 'm'));
    expect(text).toContain('| attached | 15 | 3 | 13 |');
    expect(text).toContain('| PostgreSQL / SQLite new lead, gateway CPU | 5 | ≤ 1.8 | **no** | 178% over |');
    expect(text).toContain('| PostgreSQL / SQLite replay, gateway CPU | 1.2 | ≤ 1.2 | yes |  |');
    expect(text).toContain('| PostgreSQL / SQLite new lead, req/s | 0.2 | ≥ 0.45 | **no** | 56% under |');
  });

  it('without the counter shows "–" for round trips and judges the round-trip targets on the statements, saying so', () => {
    const text = enginesSection(run(null), probes(null)).join('\n');
    expect(text).toContain('| new lead | 270 | 1350 | 5 | 1080 | – | 8.04 |');
    expect(text).toContain('| attached | 15 | – | 13 |');
    expect(text).toContain(
      '| PostgreSQL round trips per new lead, created (statements: no round-trip counter) | 8.04 | ≤ 2 | **no** | 302% over |',
    );
    expect(text).toContain(
      '| PostgreSQL round trips per replay (statements: no round-trip counter) | 4 | ≤ 1 | **no** | 300% over |',
    );
  });

  it('without PostgreSQL keeps the SQLite targets only, and marks an unmeasured figure instead of judging it', () => {
    const sqliteOnly = Object.fromEntries(Object.entries(run(2)).filter(([key]) => !key.endsWith('Pg')));
    const text = enginesSection(sqliteOnly, []).join('\n');
    expect(text).toContain('PostgreSQL was not measured');
    expect(text).not.toContain('| path |');
    expect(text).toContain('| SQLite new lead / echo, gateway CPU (8.1-9.0 before: within 10%) | 9 | ≤ 9.9 | yes |');
    expect(targetTable([{ name: 'x', value: null, limit: 1, kind: 'max' }], true)).toContain(
      '| x | not measured | ≤ 1 | – |  |',
    );
  });
});

describe('the bench report of --only engines', () => {
  it('writes the comparison under names of its own, leaving latest.md to the last whole run', () => {
    const out = mkdtempSync(join(tmpdir(), 'bench-engines-'));
    const figures = run(2);
    const printed = vi.spyOn(console, 'log').mockImplementation(() => {});
    try {
      report(
        figures,
        [figures],
        { server: 'PostgreSQL 15', loadStatements: [], oneNewLead: null, outcomes: probes(2) },
        null,
        {
          connections: 32,
          durationS: 4,
          warmupS: 2,
          rounds: 1,
          submissions: 0,
          generator: 'wrk',
          out,
          only: 'engines',
        },
      );
    } finally {
      printed.mockRestore();
    }
    const files = readdirSync(out).sort();
    const [markdown, json] = [
      readFileSync(join(out, 'latest-engines.md'), 'utf8'),
      readFileSync(join(out, 'latest-engines.json'), 'utf8'),
    ];
    rmSync(out, { recursive: true, force: true });
    expect(files).toHaveLength(4);
    expect(files).toEqual(expect.arrayContaining(['latest-engines.json', 'latest-engines.md']));
    expect(files.filter((f) => f.startsWith('engines-'))).toHaveLength(2);
    expect(markdown).toContain('only the engines comparison');
    expect(markdown).toContain('| v1 new lead (PostgreSQL) | 600 | 0.6 | 0.2 |');
    expect(markdown).toContain('| PostgreSQL round trips per replay | 1 | ≤ 1 | yes |  |');
    // The whole run's targets need scenarios this mode does not measure: none is printed.
    expect(markdown).not.toContain('The other targets');
    const written = JSON.parse(json) as { only: string; targets: { name: string; met: boolean }[] };
    expect(written.only).toBe('engines');
    expect(written.targets.find((t) => t.name === 'PostgreSQL / SQLite new lead, gateway CPU')).toMatchObject({
      value: 5,
      met: false,
    });
  });
});
