// One scenario under load (bench/load.ts: wrk, or autocannon without it), and what the bench reads around it: the server's requests per second
// and latencies, its CPU per request from /proc, and (on PostgreSQL) the database's statements and CPU.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { memoryOf } from '../test/support/child-gateway.js';
import type { BenchDatabase } from './postgres.js';
import { generate, type Generated, type Load } from './load.js';
import { REQUESTS_COUNTER, ROUND_TRIPS_COUNTER, countPerRequest, counterSum, metricsOf } from './prometheus.js';

export type { Load } from './load.js';

/** What the generator saw (bench/load.ts), and what the bench read around it. */
export interface Figures extends Generated {
  scenario: string;
  peak_rss_mb: number;
  /** CPU time of the measured server process per request, in microseconds. */
  cpu_us: number | null;
  /** CPU time of the whole PostgreSQL cluster (every server process) per request, in microseconds. */
  pg_cpu_us: number | null;
  /**
   * Round trips to PostgreSQL per request, from the gateway's own counter on /metrics (a round trip: a
   * moment a request waits for the database before sending more); null when the gateway has no such counter.
   */
  round_trips: number | null;
  /** Statements the gateway's database ran per request (pg_stat_statements, BEGIN and COMMIT included). */
  statements: number | null;
  /** What the gateway's PostgreSQL backends were doing, sampled through the run: samples per state. */
  pg_states: Record<string, number> | null;
}

export interface Target {
  /** The server process. */
  pid: number;
  /** The gateway's address: its /metrics shows when the requests left in flight are done. */
  gateway?: string;
  /** The PostgreSQL database the gateway runs on. */
  postgres?: BenchDatabase;
}

export interface Settings {
  connections: number;
  durationS: number;
  warmupS: number;
}

let ticksPerSecond: number | null = null;

/** CPU time a process used so far, user and system, in microseconds (fields 14 and 15 of /proc/<pid>/stat). */
export function cpuMicros(pid: number, withReapedChildren = false): number {
  ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces: count fields from after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = (n: number) => Number(fields[n - 3]);
  const used = ticks(14) + ticks(15) + (withReapedChildren ? ticks(16) + ticks(17) : 0);
  return (used / ticksPerSecond) * 1e6;
}

/** Requests the gateway answered so far, every route but /metrics itself (from its Prometheus counter). */
const answeredBy = async (gateway: string): Promise<number> =>
  counterSum(await metricsOf(gateway), REQUESTS_COUNTER, (labels) => labels.includes('route="/metrics"')) ?? 0;

/** The gateway's round trips to PostgreSQL so far, or null without a gateway or without the counter. */
const roundTripsOf = async (target: Target): Promise<number | null> =>
  target.gateway ? counterSum(await metricsOf(target.gateway), ROUND_TRIPS_COUNTER) : null;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Waits until the requests the generator left in flight are done: the gateway's count of answers and the
 * statements PostgreSQL counted both stand still (bounded; other servers get a moment). The requests
 * the generator abandons at the end are never answered, yet their units still run; on PostgreSQL's
 * slowest scenario they take a few hundred milliseconds, and would land in the next measured run.
 */
async function settle(target: Target): Promise<void> {
  if (!target.gateway) return sleep(200);
  const progress = async () =>
    `${await answeredBy(target.gateway!)}/${(await target.postgres?.statementCalls()) ?? ''}`;
  let last = await progress();
  for (let waited = 0; waited < 10_000; waited += 150) {
    await sleep(150);
    const now = await progress();
    if (now === last) return;
    last = now;
  }
}
const perRequest = (micros: number, requests: number) => (requests > 0 ? Math.round(micros / requests) : null);

/** The warm-up's requests are numbered from the load's offset, the measured run's this much further. */
export const MEASURED_OFFSET = 5_000_000;

/** Runs one scenario: a short warm-up, then the measured run, sampling the server's resident memory. */
export async function measure(
  settings: Settings,
  scenario: string,
  load: Load,
  target: Target,
  warmup = true,
): Promise<Figures> {
  if (warmup) {
    await generate(load, settings.connections, settings.warmupS);
    await settle(target);
  }
  await target.postgres?.resetStatements();
  const roundTripsBefore = await roundTripsOf(target);
  const cpuBefore = cpuMicros(target.pid);
  const pgCpuBefore = target.postgres?.clusterCpuMicros() ?? null;
  const watch = target.postgres?.watch();
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, memoryOf(target.pid)?.rss ?? 0)), 100);
  const result = await generate(
    { ...load, offset: (load.offset ?? 0) + (warmup ? MEASURED_OFFSET : 0) },
    settings.connections,
    settings.durationS,
  );
  clearInterval(sampler);
  const states = (await watch?.stop()) ?? null;
  await settle(target);
  const cpu = cpuMicros(target.pid) - cpuBefore;
  const pgCpuAfter = target.postgres?.clusterCpuMicros() ?? null;
  const statements = (await target.postgres?.statementCalls()) ?? null;
  const roundTripsAfter = await roundTripsOf(target);
  const sent = result.sent;
  peak = Math.max(peak, memoryOf(target.pid)?.rss ?? 0);
  const figures: Figures = {
    scenario,
    requests: result.requests,
    sent,
    rps: result.rps,
    p50_ms: result.p50_ms,
    p99_ms: result.p99_ms,
    errors: result.errors,
    non_2xx: result.non_2xx,
    peak_rss_mb: Math.round(peak / 1048576),
    cpu_us: perRequest(cpu, sent),
    pg_cpu_us: pgCpuBefore !== null && pgCpuAfter !== null ? perRequest(pgCpuAfter - pgCpuBefore, sent) : null,
    round_trips: countPerRequest(roundTripsBefore, roundTripsAfter, sent),
    statements: statements === null ? null : countPerRequest(0, statements, sent),
    pg_states: states,
  };
  const extra = [
    figures.cpu_us !== null ? `${figures.cpu_us} µs CPU/req` : '',
    figures.pg_cpu_us !== null ? `PostgreSQL ${figures.pg_cpu_us} µs CPU/req` : '',
    figures.round_trips !== null ? `${figures.round_trips} round trips/req` : '',
    figures.statements !== null ? `${figures.statements} statements/req` : '',
  ]
    .filter(Boolean)
    .join(', ');
  console.error(
    `  ${scenario}: ${figures.rps} req/s, p99 ${figures.p99_ms} ms, ${figures.errors} errors, ${figures.non_2xx} non-2xx${extra ? `, ${extra}` : ''}`,
  );
  return figures;
}

export const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : Math.round(((sorted[mid - 1]! + sorted[mid]!) / 2) * 10) / 10;
};

const medianOrNull = (values: (number | null)[]) => {
  const known = values.filter((v): v is number => v !== null);
  return known.length > 0 ? median(known) : null;
};

/** Samples of every round added up: shares over all rounds. */
function sumStates(all: (Record<string, number> | null)[]): Record<string, number> | null {
  const known = all.filter((s): s is Record<string, number> => s !== null);
  if (known.length === 0) return null;
  const out: Record<string, number> = {};
  for (const states of known) for (const [what, n] of Object.entries(states)) out[what] = (out[what] ?? 0) + n;
  return out;
}

/** Each scenario over the rounds: median rate, latencies and costs, the highest memory, every failure counted. */
export function combine(rounds: Record<string, Figures>[]): Record<string, Figures> {
  const out: Record<string, Figures> = {};
  for (const key of Object.keys(rounds[0]!)) {
    const all = rounds.map((r) => r[key]!);
    out[key] = {
      scenario: all[0]!.scenario,
      requests: all.reduce((n, r) => n + r.requests, 0),
      sent: all.reduce((n, r) => n + r.sent, 0),
      rps: median(all.map((r) => r.rps)),
      p50_ms: median(all.map((r) => r.p50_ms)),
      p99_ms: median(all.map((r) => r.p99_ms)),
      errors: all.reduce((n, r) => n + r.errors, 0),
      non_2xx: all.reduce((n, r) => n + r.non_2xx, 0),
      peak_rss_mb: Math.max(...all.map((r) => r.peak_rss_mb)),
      cpu_us: medianOrNull(all.map((r) => r.cpu_us)),
      pg_cpu_us: medianOrNull(all.map((r) => r.pg_cpu_us)),
      round_trips: medianOrNull(all.map((r) => r.round_trips)),
      statements: medianOrNull(all.map((r) => r.statements)),
      pg_states: sumStates(all.map((r) => r.pg_states)),
    };
  }
  return out;
}
