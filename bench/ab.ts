// Two builds of the gateway on one v1 or legacy POST scenario: gateway CPU per request, alternating rounds.
//
//   npm run build && COMPARE=/tmp/base SCENARIO=replay npx tsx bench/ab.ts
//
// Like bench/pass-through.ts, for the POST scenarios of bench/run.ts (its bodies): `new` (v1 new lead),
// `replay` (v1 replays of STORED events each build stored first), `answers`, `legacy` (legacy POST
// leads/). Each build runs on its own fresh SQLite file at FULL; wrk at 32 connections on each in turn,
// ROUNDS times, alternating order, and the medians of CPU us per request sent are printed.
//
// One process of a build can run slower than another process of the same build for its whole life,
// and which one is slower changes with new processes (docs/performance.md, "How to run it"). A
// comparison of one process per build measures that, not the build, so each SESSION starts both
// builds afresh, and the medians pool every session's rounds.
//   SESSIONS=2             sessions, each with new processes and files
//   ROUNDS=5 SECONDS=5     rounds per session and seconds per measured run
//   STORED=1000            leads each build stores first (the replay and answers scenarios use them)
//   COMPARE=<dir>          the second build (<dir>/dist/main.js, node_modules linked beside it)
//   PROFILE=<dir>          run this worktree's build under --cpu-prof, profiles written to <dir> at exit
//   ENGINES=sqlite         the engines each build runs on, by comma: sqlite, postgres (a fresh database
//                          of one throwaway cluster per process, bench/postgres.ts) or both, side by side
//                          in the same rounds, so their ratio is of the same minutes of the machine
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuMicros, median } from './measure.js';
import { readFileSync } from 'node:fs';
import { generate, type Load } from './load.js';
import { CHILD_ADMIN_TOKEN, ROOT, postJson } from '../test/support/child-gateway.js';
import { BENCH_INTEGRATION, answersTemplate, leadTemplate, legacyLeadTemplate } from './templates.js';
import { startBenchPostgres, type BenchCluster } from './postgres.js';

const ROUNDS = Number(process.env.ROUNDS ?? 5);
const SECONDS = Number(process.env.SECONDS ?? 5);
const SCENARIO = process.env.SCENARIO ?? 'replay';
const CONNECTIONS = 32;
const WARMUP_S = 2;
const STORED = Number(process.env.STORED ?? 1000);
const SESSIONS = Number(process.env.SESSIONS ?? 2);
const LEGACY_KEY = 'bench-ab-legacy-key-000000000001';
const ENGINES = (process.env.ENGINES ?? 'sqlite').split(',').map((e) => e.trim());
for (const e of ENGINES)
  if (e !== 'sqlite' && e !== 'postgres') throw new Error(`unknown engine ${e} in ENGINES: sqlite, postgres`);

interface Target {
  name: string;
  /** The folder of its database file, removed after the session. */
  dir: string;
  exited: Promise<void>;
  address: string;
  pid: number;
  v1Key: string;
  stop: () => void;
}

/** The scenario's load on a target; `round` keeps new events apart between runs. */
function loadOf(t: Target, round: number): Load {
  const v1 = { authorization: `Bearer ${t.v1Key}` };
  const offset = (round + 1) * 1_000_000;
  switch (SCENARIO) {
    case 'new':
      return { url: `${t.address}/api/integrations/v1/leads/`, headers: v1, body: leadTemplate('new'), offset };
    case 'replay':
      return {
        url: `${t.address}/api/integrations/v1/leads/`,
        headers: v1,
        body: leadTemplate('seed', { every: STORED }),
      };
    case 'answers':
      return {
        url: `${t.address}/api/integrations/v1/leads/answers/`,
        headers: v1,
        body: answersTemplate('seed', STORED, 0),
        offset,
      };
    case 'legacy':
      return {
        url: `${t.address}/api/bots/api/leads/`,
        headers: { 'x-bot-api-key': LEGACY_KEY },
        body: legacyLeadTemplate(),
        offset,
      };
    default:
      throw new Error(`unknown SCENARIO ${SCENARIO}: new, replay, answers or legacy`);
  }
}

function listening(child: ChildProcess, name: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let seen = '';
    let found = false;
    child.on('exit', (code) => reject(new Error(`${name} exited with ${code}:\n${seen}`)));
    // Read and dropped once listening: the request log lines must cost the bench nothing.
    const onData = (chunk: Buffer) => {
      if (found) return;
      seen += chunk.toString();
      const m = /"address":"(http:\/\/[^"]+)".*"msg":"lead-gateway listening"/.exec(seen);
      if (m) {
        found = true;
        seen = '';
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
  });
}

async function gateway(name: string, build: string | undefined, engine: string): Promise<Target> {
  const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-ab-'));
  const store =
    engine === 'postgres'
      ? { DATABASE_URL: (await (await postgres()).database()).url }
      : { DATABASE_PATH: join(dir, 'gateway.db'), SQLITE_SYNCHRONOUS: 'FULL' };
  const env = { ...store, RATE_LIMIT_PER_MINUTE: '1000000', LEGACY_UPSTREAM_URL: 'http://127.0.0.1:9' };
  // Both builds start the same way (one spawn, one environment): only the build differs.
  const root = build ?? ROOT;
  const nodeArgs =
    build === undefined && process.env.PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.PROFILE}`] : [];
  const full = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOST: '127.0.0.1',
    PORT: '0',
    RULES_DIR: join(ROOT, 'rules'),
    ADMIN_TOKEN: CHILD_ADMIN_TOKEN,
    LOG_LEVEL: 'info',
    ...env,
  };
  const child = spawn(process.execPath, [...nodeArgs, join(root, 'dist', 'main.js')], {
    cwd: root,
    env: full,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    return await prepare({
      name,
      dir,
      exited,
      address: await listening(child, name),
      pid: child.pid!,
      stop: () => child.kill('SIGTERM'),
    });
  } catch (error) {
    // Not a target yet: nobody else would stop it or remove its file.
    child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

let cluster: Promise<BenchCluster> | null = null;
/** The one cluster of the run, started when a PostgreSQL target is first asked for. */
function postgres(): Promise<BenchCluster> {
  cluster ??= startBenchPostgres().then((c) => {
    if ('reason' in c) throw new Error(`ENGINES asks for postgres, but ${c.reason}`);
    return c;
  });
  return cluster;
}

async function stopPostgres(): Promise<void> {
  if (cluster) await (await cluster).stop();
}

/** Keys issued, the legacy key imported and STORED leads seeded: the target ready for its rounds. */
async function prepare(target: Omit<Target, 'v1Key'>): Promise<Target> {
  const { name } = target;
  const admin = { authorization: `Bearer ${CHILD_ADMIN_TOKEN}` };
  const issued = await postJson(`${target.address}/admin/v1/integrations/${BENCH_INTEGRATION}/keys`, admin, {});
  if (issued.status !== 201) throw new Error(`issuing a key: ${issued.status} ${JSON.stringify(issued.body)}`);
  const imported = await postJson(`${target.address}/admin/v1/integrations/${BENCH_INTEGRATION}/keys/import`, admin, {
    key: LEGACY_KEY,
  });
  if (imported.status !== 201)
    throw new Error(`importing the legacy key: ${imported.status} ${JSON.stringify(imported.body)}`);
  const t = { ...target, v1Key: issued.body.key as string };
  // The events the replay and answers scenarios use: the first STORED of the seed run.
  const seeded = await generate(
    {
      url: `${t.address}/api/integrations/v1/leads/`,
      headers: { authorization: `Bearer ${t.v1Key}` },
      body: leadTemplate('seed'),
      amount: STORED,
    },
    8,
    0,
  );
  if (seeded.non_2xx > 0 || seeded.errors > 0)
    throw new Error(`seeding ${name}: ${seeded.non_2xx} refused, ${seeded.errors} errors`);
  return t;
}

async function run(t: Target, round: number): Promise<{ cpu: number; rps: number; errors: number }> {
  const before = cpuMicros(t.pid);
  const result = await generate(loadOf(t, round), CONNECTIONS, SECONDS);
  await new Promise((resolve) => setTimeout(resolve, 300));
  const used = cpuMicros(t.pid) - before;
  return { cpu: Math.round(used / result.sent), rps: result.rps, errors: result.errors + result.non_2xx };
}

/** One session: each build in a fresh process on a fresh file, warmed, then ROUNDS alternating rounds. */
async function session(index: number, figures: Map<string, Figure[]>): Promise<void> {
  const targets: Target[] = [];
  try {
    // The order of starting alternates too: a process that starts first must not be the one favoured.
    const builds = targetsOf();
    for (const { name, build, engine } of index % 2 === 0 ? builds : [...builds].reverse()) {
      targets.push(await gateway(name, build, engine));
      console.error(`session ${index + 1}: ${name} is process ${targets.at(-1)!.pid}`);
    }
    for (const t of targets) await generate(loadOf(t, 99), CONNECTIONS, WARMUP_S);
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? targets : [...targets].reverse();
      for (const t of order) figures.get(t.name)!.push(await run(t, round));
      console.error(
        `session ${index + 1} round ${round + 1}: ${targets.map((t) => `${t.name} ${figures.get(t.name)!.at(-1)!.cpu} us`).join(', ')}`,
      );
    }
    // Memory after the session: the peak, and what is resident now by kind (anonymous: heap and
    // SQLite's page caches; file: the database pages read through its memory map).
    for (const t of targets) {
      const status = readFileSync(`/proc/${t.pid}/status`, 'utf8');
      const mb = (field: string) => Math.round(Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024);
      memory
        .get(t.name)!
        .push(`peak RSS ${mb('VmHWM')} MB; now ${mb('VmRSS')} MB: anonymous ${mb('RssAnon')}, file ${mb('RssFile')}`);
    }
  } finally {
    for (const t of targets) t.stop();
    await Promise.all(targets.map((t) => t.exited));
    for (const t of targets) rmSync(t.dir, { recursive: true, force: true });
  }
}

/** Each build on each engine; named by build alone when there is one engine. */
function targetsOf(): { name: string; build: string | undefined; engine: string }[] {
  const builds: [string, string | undefined][] = [['gateway', undefined]];
  if (process.env.COMPARE) builds.push([`gateway (${process.env.COMPARE})`, process.env.COMPARE]);
  return builds.flatMap(([name, build]) =>
    ENGINES.map((engine) => ({ name: ENGINES.length > 1 ? `${name} ${engine}` : name, build, engine })),
  );
}

type Figure = { cpu: number; rps: number; errors: number };
const names = targetsOf().map((t) => t.name);
const figures = new Map<string, Figure[]>(names.map((n) => [n, []]));
const memory = new Map<string, string[]>(names.map((n) => [n, []]));
try {
  for (let i = 0; i < SESSIONS; i++) await session(i, figures);
} finally {
  await stopPostgres();
}
console.log(
  `${SCENARIO}: CPU us per request, medians of ${SESSIONS} sessions x ${ROUNDS} rounds of ${SECONDS} s at ${CONNECTIONS} connections:`,
);
for (const [name, f] of figures) {
  const perSession = Array.from({ length: SESSIONS }, (_, i) =>
    median(f.slice(i * ROUNDS, (i + 1) * ROUNDS).map((x) => x.cpu)),
  );
  console.log(
    `  ${name.padEnd(40)} ${String(median(f.map((x) => x.cpu))).padStart(5)} us  ${String(median(f.map((x) => x.rps))).padStart(6)} req/s  errors ${f.reduce((s, x) => s + x.errors, 0)}  (sessions: ${perSession.join(' ')})`,
  );
}
// Paired by session (same minutes of the machine): the difference each session saw, then its median.
const perSession = (f: Figure[]) => Array.from({ length: SESSIONS }, (_, i) => f.slice(i * ROUNDS, (i + 1) * ROUNDS));
for (const [i, engine] of ENGINES.entries()) {
  if (!process.env.COMPARE) break;
  const [a, b] = [names[i]!, names[i + ENGINES.length]!].map((n) => perSession(figures.get(n)!));
  const diffs = a!.map((rounds, s) => median(rounds.map((x, j) => x.cpu - b![s]![j]!.cpu)));
  const wins = diffs.filter((d) => d < 0).length;
  console.log(
    `  ${ENGINES.length > 1 ? `${engine}: ` : ''}first - second, per session: ${diffs.join(' ')}; median ${median(diffs)} us, first lower in ${wins} of ${SESSIONS}`,
  );
}
// Each build's PostgreSQL against its SQLite, round by round (the same minutes), then the median.
if (ENGINES.length === 2) {
  for (let b = 0; b < names.length; b += 2) {
    const [lite, pg] = [figures.get(names[b]!)!, figures.get(names[b + 1]!)!];
    const [l, p] = ENGINES[0] === 'sqlite' ? [lite, pg] : [pg, lite];
    const ratios = l.map((x, j) => Math.round((p[j]!.cpu / x.cpu) * 100) / 100);
    console.log(
      `  ${names[b]!.replace(/ \w+$/, '')}: PostgreSQL / SQLite per round ${ratios.join(' ')}; median ${median(ratios)}`,
    );
  }
}
for (const [name, m] of memory) for (const line of m) console.log(`  ${name.padEnd(40)} ${line}`);
