// The bench's report: one Markdown table of every scenario (PostgreSQL rows beside their SQLite ones),
// both engines side by side with their targets (bench/engines.ts), the other targets, and what
// PostgreSQL's statements cost; written with the raw figures to bench/results/.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { engineGoals, enginesSection, type OutcomeProbe } from './engines.js';
import { met, targetTable, type Goal } from './goals.js';
import type { Figures } from './measure.js';
import type { LoggedStatement, StatementStats } from './postgres.js';

export interface PostgresDetail {
  /** The server, or why there was none. */
  server: string;
  /** Every statement of the first round's PostgreSQL new-lead scenario, most server time first. */
  loadStatements: StatementStats[];
  /** The statements of one new lead sent alone, in order (null: not traced). */
  oneNewLead: LoggedStatement[] | null;
  /** A new lead's outcomes sent alone, with their round trips (empty: not probed). */
  outcomes: OutcomeProbe[];
}

/** What a new lead's, a replay's and an answers' unit of work cost the store alone (bench/store-unit.ts), CPU µs per unit. */
export interface StoreUnits {
  /** Units in flight at once. */
  concurrency: number;
  new_lead_cpu_us: number;
  replay_cpu_us: number;
  answers_cpu_us: number;
}

/** The medians over the rounds, and each round's figures. */
export interface StoreUnitFigures extends StoreUnits {
  rounds: StoreUnits[];
}

export interface RunSettings {
  connections: number;
  durationS: number;
  warmupS: number;
  rounds: number;
  submissions: number;
  /** The load generator, as bench/load.ts names it. */
  generator: string;
  out: string;
  /** `engines`: only the engines comparison ran (the echo, then each path on both engines). */
  only: 'engines' | null;
}

/** Each PostgreSQL row and the SQLite row of the same scenario. */
const SQLITE_ROW: Record<string, string> = {
  newLeadPg: 'newLead',
  replayPg: 'replay',
  answersPg: 'answers',
  legacyPg: 'legacy',
};

const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;
const cell = (v: number | null) => (v === null ? '–' : String(v));
const oneLine = (text: string, max = 110) => {
  const sql = text.replace(/\s+/g, ' ');
  return (sql.length > max ? `${sql.slice(0, max - 1)}…` : sql).replace(/\|/g, '\\|');
};

/** A scenario's backend states as shares, largest first. */
const statesLine = (states: Record<string, number>) => {
  const total = Object.values(states).reduce((a, b) => a + b, 0) || 1;
  return Object.entries(states)
    .sort((a, b) => b[1] - a[1])
    .map(([what, n]) => `${what} ${Math.round((n / total) * 100)}%`)
    .join(', ');
};

function postgresSection(
  f: Record<string, Figures>,
  firstRound: Record<string, Figures>,
  detail: PostgresDetail,
): string[] {
  const newLead = firstRound.newLeadPg;
  if (!newLead) return [`PostgreSQL: ${detail.server}.`, ''];
  const sent = newLead.sent;
  const lines = [`PostgreSQL: ${detail.server}, on the same machine; the gateway's pool at its default size.`, ''];
  const watched = Object.keys(SQLITE_ROW).filter((k) => f[k]?.pg_states);
  if (watched.length > 0) {
    lines.push(
      "Where the gateway's backends were, sampled from pg_stat_activity every 50 ms over each run (Lock:transactionid: waiting for another unit's row lock; IO:WALSync and LWLock:WALWrite: the commit's flush):",
      '',
      ...watched.map((k) => `- ${f[k]!.scenario}: ${statesLine(f[k]!.pg_states!)}`),
      '',
    );
  }
  if (detail.loadStatements.length > 0) {
    const total = detail.loadStatements.reduce((n, s) => n + s.total_ms, 0);
    lines.push(
      `Statements of the first round's PostgreSQL new-lead scenario, ${sent} requests sent (pg_stat_statements; a statement's server time includes waiting for row locks, and COMMIT's excludes the commit's WAL flush, which comes after the statement is counted):`,
      '',
      '| statement | calls | per request | share of server time | mean ms |',
      '|---|---:|---:|---:|---:|',
      ...detail.loadStatements.map(
        (s) =>
          `| \`${oneLine(s.query)}\` | ${s.calls} | ${Math.round((s.calls / sent) * 100) / 100} | ${Math.round((s.total_ms / total) * 1000) / 10}% | ${Math.round((s.total_ms / s.calls) * 1000) / 1000} |`,
      ),
      '',
    );
  }
  if (detail.oneNewLead) {
    lines.push(
      'One new lead sent alone on the warm gateway, its statements in the order the server ran them (from the server log; without pipelining, one round trip each):',
      '',
      ...detail.oneNewLead.map(
        (s, i) => `${i + 1}. [backend ${s.backend}] ${s.name ? `\`${s.name}\`: ` : ''}\`${oneLine(s.sql, 140)}\``,
      ),
      '',
    );
  }
  return lines;
}

/** Each v1 path against its unit of work alone: what the request around the unit costs, in echoes. */
function unitsSection(
  f: Record<string, Figures>,
  rounds: Record<string, Figures>[],
  units: StoreUnitFigures,
): string[] {
  const echo = f.echo!.cpu_us ?? Number.NaN;
  const paths: [string, keyof StoreUnits][] = [
    ['newLead', 'new_lead_cpu_us'],
    ['replay', 'replay_cpu_us'],
    ['answers', 'answers_cpu_us'],
  ];
  // Each round's gateway figure less that round's unit: the medians above may come from different rounds.
  const perRound = (key: string, unit: keyof StoreUnits) =>
    rounds.map((r, i) => Math.round((r[key]!.cpu_us ?? Number.NaN) - units.rounds[i]![unit])).join(', ');
  return [
    `The store's units of work alone, in the same run (bench/store-unit.ts: the built services called in one process on a fresh file at FULL, ${units.concurrency} units in flight, committed in groups; no HTTP, validation, logging or reply), and what each path costs around its unit:`,
    '',
    '| path | gateway CPU µs/req | its unit alone, µs | the rest: gateway − unit, µs | the rest / echo CPU | the rest, per round |',
    '|---|---:|---:|---:|---:|---:|',
    ...paths.map(([key, unitKey]) => {
      const gateway = f[key]!.cpu_us ?? Number.NaN;
      const unit = units[unitKey];
      return `| ${f[key]!.scenario} | ${gateway} | ${Math.round(unit)} | ${Math.round(gateway - unit)} | ${ratio(gateway - unit, echo)} | ${perRound(key, unitKey)} |`;
    }),
    '',
  ];
}

/** The targets and context of a whole run (not of `--only engines`, which measures none of their scenarios). */
function fullRunSections(
  f: Record<string, Figures>,
  rounds: Record<string, Figures>[],
  units: StoreUnitFigures,
  run: RunSettings,
): { goals: Goal[]; lines: string[] } {
  const get = (k: string) => f[k]!;
  const cpu = (k: string) => get(k).cpu_us ?? Number.NaN;
  // Gateway CPU per request at the run's connections, FULL durability, production logging.
  const goals: Goal[] = [
    { name: 'v1 new lead, gateway CPU µs/req', value: cpu('newLead'), limit: 260, kind: 'max' },
    { name: 'v1 replay, gateway CPU µs/req', value: cpu('replay'), limit: 170, kind: 'max' },
    { name: 'v1 answers, gateway CPU µs/req', value: cpu('answers'), limit: 180, kind: 'max' },
    {
      name: 'legacy POST leads/ CPU / v1 new lead CPU',
      value: ratio(cpu('legacy'), cpu('newLead')),
      limit: 1.1,
      kind: 'max',
    },
    { name: 'legacy pass-through, gateway CPU µs/req', value: cpu('passThrough'), limit: 110, kind: 'max' },
    {
      name: `v1 new lead p99 at ${run.connections} connections (ms)`,
      value: get('newLead').p99_ms,
      limit: 20,
      kind: 'max',
    },
    {
      name: `peak RSS over ${run.submissions} submissions (MB)`,
      value: get('long').peak_rss_mb,
      limit: 250,
      kind: 'max',
    },
    {
      name: `new lead CPU with ${run.submissions} stored / empty`,
      value: ratio(cpu('newLeadFilled'), cpu('newLead')),
      limit: 1.1,
      kind: 'max',
    },
  ];
  const trips = f.newLeadPg?.round_trips ?? f.newLeadPg?.statements;
  if (trips != null)
    goals.push({
      name: `database round trips per new lead (PostgreSQL${f.newLeadPg!.round_trips == null ? ': statements, no round-trip counter' : ''})`,
      value: trips,
      limit: 4,
      kind: 'max',
    });
  const perRound = (key: string, base: string) => rounds.map((r) => ratio(r[key]!.rps, r[base]!.rps)).join(', ');
  const lines = [
    ...targetTable(goals),
    '',
    'Context (not targets): throughput ratios to the references of the same run, and what forwarding alone costs here.',
    '',
    '| ratio | measured |',
    '|---|---:|',
    `| v1 new lead / echo (req/s) | ${ratio(get('newLead').rps, get('echo').rps)} |`,
    `| v1 replay / echo (req/s) | ${ratio(get('replay').rps, get('echo').rps)} |`,
    `| new lead FULL / OFF (req/s) | ${ratio(get('newLead').rps, get('newLeadOff').rps)} |`,
    `| RESPONSE_CHECKS=on / off, CPU of a new lead | ${ratio(cpu('newLeadChecked'), cpu('newLead'))} |`,
    `| RESPONSE_CHECKS=on / off, CPU of a replay | ${ratio(cpu('replayChecked'), cpu('replay'))} |`,
    `| bare reply-from proxy / upstream direct (req/s) | ${ratio(get('bareProxy').rps, get('direct').rps)} |`,
    `| pass-through / bare reply-from proxy (req/s) | ${ratio(get('passThrough').rps, get('bareProxy').rps)} |`,
    `| pass-through CPU − bare reply-from proxy CPU (µs/req) | ${cpu('passThrough') - cpu('bareProxy')} |`,
    ...(f.undiciProxy ? [`| bare undici stream proxy CPU (µs/req) | ${cpu('undiciProxy')} |`] : []),
    ...(f.nginxProxy ? [`| nginx proxy CPU (µs/req) | ${cpu('nginxProxy')} |`] : ['| nginx proxy | not installed |']),
    `| v1 new lead CPU / (its unit alone + echo) CPU (the new lead's 260 µs target is 1.1 × (a ~190 µs unit + a ~46 µs echo)) | ${ratio(cpu('newLead'), units.new_lead_cpu_us + cpu('echo'))} |`,
    `| v1 new lead / echo, per round | ${perRound('newLead', 'echo')} |`,
    ...(f.newLeadPg ? [`| v1 new lead PostgreSQL / SQLite, per round | ${perRound('newLeadPg', 'newLead')} |`] : []),
    '',
    ...unitsSection(f, rounds, units),
  ];
  return { goals, lines };
}

/** `units`: the store's units alone, null when not measured (`--only engines`). */
export function report(
  f: Record<string, Figures>,
  rounds: Record<string, Figures>[],
  detail: PostgresDetail,
  units: StoreUnitFigures | null,
  run: RunSettings,
): void {
  const when = new Date().toISOString();
  const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}`;
  const rows = Object.entries(f).map(([key, r]) => {
    const sqlite = SQLITE_ROW[key] ? f[SQLITE_ROW[key]] : undefined;
    return `| ${r.scenario} | ${r.rps} | ${f.echo ? ratio(r.rps, f.echo.rps) : ''} | ${sqlite ? ratio(r.rps, sqlite.rps) : ''} | ${r.p50_ms} | ${r.p99_ms} | ${r.errors} | ${r.non_2xx} | ${r.peak_rss_mb} | ${cell(r.cpu_us)} | ${cell(r.pg_cpu_us)} | ${cell(r.round_trips)} | ${cell(r.statements)} |`;
  });
  const full = run.only === null && units !== null ? fullRunSections(f, rounds, units, run) : null;
  const what =
    run.only === 'engines'
      ? 'only the engines comparison (`--only engines`: the echo, then each path on SQLite and on PostgreSQL)'
      : 'each with its servers started afresh (the long run once, then the new lead with its leads stored once per round, each a restarted process)';
  const markdown = [
    `# Benchmark ${when}`,
    '',
    `${machine}; ${run.connections} connections, ${run.durationS} s per scenario after a ${run.warmupS} s warm-up, load from ${run.generator}, median of ${run.rounds} rounds, ${what}; SQLite gateway with synchronous=FULL unless marked.`,
    "CPU µs/req: the measured server process (the gateway, or the reference server) per request sent; PostgreSQL CPU: every process of the cluster; round trips: the gateway's counter of waits for PostgreSQL per request ('–' without it); statements: those the gateway's database ran per request.",
    '',
    '| scenario | req/s | × echo | × SQLite | p50 ms | p99 ms | errors | non-2xx | peak RSS MB | CPU µs/req | PostgreSQL CPU µs/req | round trips/req | statements/req |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows,
    '',
    ...enginesSection(f, detail.outcomes),
    ...(full ? ['## The other targets', '', ...full.lines] : []),
    ...postgresSection(f, rounds[0]!, detail),
  ].join('\n');
  const goals = [...engineGoals(f, detail.outcomes), ...(full?.goals ?? [])];
  mkdirSync(run.out, { recursive: true });
  // A quick run of the engines alone keeps names of its own: latest.md stays the last whole run.
  const prefix = run.only ? `${run.only}-` : '';
  const stamp = `${prefix}${when.replace(/[:.]/g, '-')}`;
  const json = {
    when,
    machine,
    generator: run.generator,
    connections: run.connections,
    duration_s: run.durationS,
    rounds,
    figures: f,
    store_units: units,
    only: run.only,
    targets: goals.map((g) => ({ ...g, met: met(g) })),
    postgres: detail,
  };
  const text = JSON.stringify(json, null, 2) + '\n';
  writeFileSync(join(run.out, `${stamp}.json`), text);
  writeFileSync(join(run.out, `${stamp}.md`), markdown);
  // The last run's figures under fixed names, for tools and for the docs to point at.
  writeFileSync(join(run.out, `latest${run.only ? `-${run.only}` : ''}.json`), text);
  writeFileSync(join(run.out, `latest${run.only ? `-${run.only}` : ''}.md`), markdown);
  console.log(markdown);
  // A scenario with failed requests measured something else than it says: the run does not count.
  const broken = Object.values(f).filter((r) => r.errors > 0 || r.non_2xx > 0);
  if (broken.length > 0) {
    console.error(
      `Requests failed in: ${broken.map((r) => r.scenario).join(', ')}. Fix the scenario before reading its figures.`,
    );
    process.exitCode = 1;
  }
}
