// `npm run bench`: the gateway under load on 127.0.0.1, every figure a ratio to a baseline of the same run.
//
// One run starts a plain Fastify JSON echo server (the baseline), a stand-in legacy upstream, and the
// built gateway on fresh SQLite files, and measures each scenario with autocannon at a fixed number of
// connections. It prints a Markdown table and writes it, with the raw figures as JSON, to bench/results/.
// Options: --duration <s> (measured seconds per scenario, default 8), --rounds <n> (default 3: the
// short scenarios run once per round and the median is reported), --connections <n> (default 32),
// --submissions <n> (the long run's size, default 100000), --out <dir>.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { CHILD_ADMIN_TOKEN, ROOT, memoryOf, postJson, spawnGateway, type ChildGateway } from '../test/support/child-gateway.js';

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '32' },
    submissions: { type: 'string', default: '100000' },
    out: { type: 'string', default: join(ROOT, 'bench', 'results') },
  },
});
const DURATION = Number(args.duration);
const CONNECTIONS = Number(args.connections);
const SUBMISSIONS = Number(args.submissions);
const ROUNDS = Math.max(1, Number(args.rounds));
const WARMUP_S = 2;
const INTEGRATION = 'brightpath:telegram-bot';
const LEGACY_KEY = 'bench-legacy-bot-key-0123456789';
const LEADS = '/api/integrations/v1/leads/';
const ANSWERS = '/api/integrations/v1/leads/answers/';

interface Figures {
  scenario: string;
  requests: number;
  rps: number;
  p50_ms: number;
  p99_ms: number;
  errors: number;
  non_2xx: number;
  peak_rss_mb: number;
}

interface Load {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** A body per request; `i` counts from 0 across the warm-up and the measured run. */
  body?: (i: number) => unknown;
  /** Run this many requests instead of for `DURATION` seconds. */
  amount?: number;
}

/** Runs one scenario: a short warm-up, then the measured run, sampling the server's resident memory. */
async function measure(scenario: string, load: Load, pid: number, warmup = true): Promise<Figures> {
  let counter = 0;
  const options = (seconds: number | null): autocannon.Options => ({
    url: load.url,
    connections: CONNECTIONS,
    ...(load.amount !== undefined && seconds === null ? { amount: load.amount } : { duration: seconds ?? DURATION }),
    requests: [
      {
        method: load.method ?? 'POST',
        headers: { 'content-type': 'application/json', ...load.headers },
        ...(load.body ? { setupRequest: (req: autocannon.Request) => ({ ...req, body: JSON.stringify(load.body!(counter++)) }) } : {}),
      },
    ],
  });
  if (warmup) await autocannon(options(WARMUP_S));
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, memoryOf(pid)?.rss ?? 0)), 100);
  const result = await autocannon(options(load.amount !== undefined ? null : DURATION));
  clearInterval(sampler);
  peak = Math.max(peak, memoryOf(pid)?.rss ?? 0);
  const figures: Figures = {
    scenario,
    requests: result.requests.total,
    rps: Math.round(result.requests.total / (result.duration || 1)),
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
    errors: result.errors + result.timeouts,
    non_2xx: result.non2xx,
    peak_rss_mb: Math.round(peak / 1048576),
  };
  console.error(`  ${scenario}: ${figures.rps} req/s, p99 ${figures.p99_ms} ms, ${figures.errors} errors, ${figures.non_2xx} non-2xx`);
  return figures;
}

/** A reference server from bench/servers.ts, resolved with its address once it listens. */
async function startServer(mode: 'echo' | 'upstream' | 'proxy', target?: string): Promise<{ address: string; child: ChildProcess }> {
  const args = ['--import', 'tsx', join(ROOT, 'bench', 'servers.ts'), mode, ...(target ? [target] : [])];
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const address = await new Promise<string>((resolve, reject) => {
    child.on('exit', (code) => reject(new Error(`${mode} server exited with ${code}`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      const m = /listening (\S+)/.exec(chunk.toString());
      if (m) resolve(m[1]!);
    });
  });
  return { address, child };
}

async function startGateway(dbPath: string, synchronous: 'FULL' | 'OFF', upstream?: string): Promise<ChildGateway> {
  return spawnGateway({
    entry: 'dist',
    env: {
      DATABASE_PATH: dbPath,
      SQLITE_SYNCHRONOUS: synchronous,
      // The limiter still runs (its cost is part of every figure) but never refuses.
      RATE_LIMIT_PER_MINUTE: '1000000',
      ...(upstream ? { LEGACY_UPSTREAM_URL: upstream } : {}),
    },
  });
}

async function issueKeys(gw: ChildGateway): Promise<string> {
  const admin = { authorization: `Bearer ${CHILD_ADMIN_TOKEN}` };
  const issued = await postJson(`${gw.address}/admin/v1/integrations/${INTEGRATION}/keys`, admin, {});
  if (issued.status !== 201) throw new Error(`issuing a key: ${issued.status} ${JSON.stringify(issued.body)}`);
  const imported = await postJson(`${gw.address}/admin/v1/integrations/${INTEGRATION}/keys/import`, admin, { key: LEGACY_KEY });
  if (imported.status !== 201) throw new Error(`importing the legacy key: ${imported.status} ${JSON.stringify(imported.body)}`);
  return issued.body.key as string;
}

/** The lead a new bot sends; `run` keeps event_ids apart between scenarios on one database. */
const leadBody = (run: string) => (i: number) => ({
  event_id: `${run}-${i}`,
  external_contact_id: `telegram:${run}-${i}`,
  first_name: 'Bench',
  last_name: `Person ${i}`,
  phone: `+99890${String(1_000_000 + (i % 9_000_000)).padStart(7, '0')}`,
  metadata: { source_key: 'ig_spring' },
  answers: { course: 'python', age: 18 + (i % 40) },
});

const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;

/** One round of the short scenarios, each server fresh; `round` keeps event_ids apart between rounds. */
async function shortRound(work: string, round: number, children: { stop(): unknown }[]): Promise<Record<string, Figures>> {
  const figures: Record<string, Figures> = {};
  // 1. The baseline: a plain Fastify JSON echo.
  const echo = await startServer('echo');
  children.push({ stop: () => echo.child.kill() });
  figures.echo = await measure('echo baseline', { url: `${echo.address}/echo`, body: leadBody(`echo${round}`) }, echo.child.pid!);
  echo.child.kill();

  // 2. The upstream legacy API alone, a bare proxy to it, then the gateway with synchronous=FULL in front of it.
  const upstream = await startServer('upstream');
  children.push({ stop: () => upstream.child.kill() });
  figures.direct = await measure('upstream direct', { url: `${upstream.address}/api/bots/api/employees/`, method: 'GET' }, upstream.child.pid!);
  const proxy = await startServer('proxy', upstream.address);
  children.push({ stop: () => proxy.child.kill() });
  figures.bareProxy = await measure('bare reply-from proxy', { url: `${proxy.address}/api/bots/api/employees/`, method: 'GET' }, proxy.child.pid!);
  proxy.child.kill();

  const full = await startGateway(join(work, `full${round}.db`), 'FULL', upstream.address);
  children.push(full);
  const v1Key = await issueKeys(full);
  const v1 = { authorization: `Bearer ${v1Key}` };
  const run = `new${round}`;
  figures.newLead = await measure('v1 new lead (FULL)', { url: `${full.address}${LEADS}`, headers: v1, body: leadBody(run) }, full.pid);
  // Replays of events the previous scenario stored, byte for byte the same bodies.
  figures.replay = await measure('v1 replay', { url: `${full.address}${LEADS}`, headers: v1, body: (i) => leadBody(run)(i % 1000) }, full.pid);
  figures.answers = await measure(
    'v1 answers',
    { url: `${full.address}${ANSWERS}`, headers: v1, body: (i) => ({ event_id: `answers-${i}`, external_contact_id: `telegram:${run}-${i % 1000}`, answers: { laptop: i % 2 ? 'ha' : "yo'q", goal: `goal ${i}` } }) },
    full.pid,
  );
  figures.legacy = await measure(
    'legacy POST leads/',
    {
      url: `${full.address}/api/bots/api/leads/`,
      headers: { 'x-bot-api-key': LEGACY_KEY },
      body: (i) => ({ first_name: 'Legacy', phone: `+99891${String(1_000_000 + i).padStart(7, '0')}`, source: 'ig_spring', extra_data: { telegram_id: 500_000 + i, course: 'python' } }),
    },
    full.pid,
  );
  figures.passThrough = await measure('legacy pass-through', { url: `${full.address}/api/bots/api/employees/`, method: 'GET', headers: { 'x-bot-api-key': LEGACY_KEY } }, full.pid);
  await full.stop();
  upstream.child.kill();

  // 3. Durability's price: the same submissions with synchronous=OFF.
  const off = await startGateway(join(work, `off${round}.db`), 'OFF');
  children.push(off);
  const offKey = await issueKeys(off);
  figures.newLeadOff = await measure('v1 new lead (OFF)', { url: `${off.address}${LEADS}`, headers: { authorization: `Bearer ${offKey}` }, body: leadBody(run) }, off.pid);
  await off.stop();
  return figures;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : Math.round(((sorted[mid - 1]! + sorted[mid]!) / 2) * 10) / 10;
};

/** Each scenario over the rounds: median rate and latencies, the highest memory, every failure counted. */
function combine(rounds: Record<string, Figures>[]): Record<string, Figures> {
  const out: Record<string, Figures> = {};
  for (const key of Object.keys(rounds[0]!)) {
    const all = rounds.map((r) => r[key]!);
    out[key] = {
      scenario: all[0]!.scenario,
      requests: all.reduce((n, r) => n + r.requests, 0),
      rps: median(all.map((r) => r.rps)),
      p50_ms: median(all.map((r) => r.p50_ms)),
      p99_ms: median(all.map((r) => r.p99_ms)),
      errors: all.reduce((n, r) => n + r.errors, 0),
      non_2xx: all.reduce((n, r) => n + r.non_2xx, 0),
      peak_rss_mb: Math.max(...all.map((r) => r.peak_rss_mb)),
    };
  }
  return out;
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'lead-gateway-bench-'));
  const children: { stop(): unknown }[] = [];
  try {
    console.error(`lead-gateway benchmark: ${ROUNDS} rounds, ${CONNECTIONS} connections, ${DURATION} s per scenario (after ${WARMUP_S} s warm-up)`);
    // These machines are shared: a neighbour's burst can halve one measurement. Every short scenario is
    // run in each round, next to its baseline, and the median over the rounds is reported.
    const rounds: Record<string, Figures>[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      console.error(`round ${round} of ${ROUNDS}`);
      rounds.push(await shortRound(work, round, children));
    }
    const figures = combine(rounds);

    // 4. A long run: SUBMISSIONS new leads on a fresh database, the process's peak memory over all of it.
    const longDb = join(work, 'long.db');
    const long = await startGateway(longDb, 'FULL');
    children.push(long);
    const longKey = await issueKeys(long);
    figures.long = await measure(`${SUBMISSIONS} submissions`, { url: `${long.address}${LEADS}`, headers: { authorization: `Bearer ${longKey}` }, body: leadBody('long'), amount: SUBMISSIONS }, long.pid, false);
    figures.long.peak_rss_mb = Math.round((memoryOf(long.pid)?.peak ?? 0) / 1048576);
    await long.stop();

    // 5. The same submissions with those leads already stored (a restarted process, as for the empty figure).
    const filled = await startGateway(longDb, 'FULL');
    children.push(filled);
    figures.newLeadFilled = await measure(`v1 new lead (${SUBMISSIONS} stored)`, { url: `${filled.address}${LEADS}`, headers: { authorization: `Bearer ${longKey}` }, body: leadBody('filled') }, filled.pid);
    await filled.stop();

    report(figures, rounds);
  } finally {
    for (const child of children) child.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

interface Target {
  name: string;
  value: number;
  limit: number;
  /** `min`: the value must reach the limit; `max`: it must stay under it. */
  kind: 'min' | 'max';
}

function report(f: Record<string, Figures>, rounds: Record<string, Figures>[]): void {
  const get = (k: string) => f[k]!;
  const targets: Target[] = [
    { name: 'v1 new lead / echo', value: ratio(get('newLead').rps, get('echo').rps), limit: 0.15, kind: 'min' },
    { name: 'v1 replay / echo', value: ratio(get('replay').rps, get('echo').rps), limit: 0.4, kind: 'min' },
    { name: `v1 new lead p99 at ${CONNECTIONS} connections (ms)`, value: get('newLead').p99_ms, limit: 25, kind: 'max' },
    { name: 'legacy POST leads/ / v1 new lead', value: ratio(get('legacy').rps, get('newLead').rps), limit: 0.8, kind: 'min' },
    { name: 'pass-through / upstream direct', value: ratio(get('passThrough').rps, get('direct').rps), limit: 0.7, kind: 'min' },
    { name: 'new lead FULL / OFF', value: ratio(get('newLead').rps, get('newLeadOff').rps), limit: 0.8, kind: 'min' },
    { name: `new lead with ${SUBMISSIONS} stored / empty`, value: ratio(get('newLeadFilled').rps, get('newLead').rps), limit: 0.8, kind: 'min' },
    { name: `peak RSS over ${SUBMISSIONS} submissions (MB)`, value: get('long').peak_rss_mb, limit: 250, kind: 'max' },
  ];
  const met = (t: Target) => (t.kind === 'min' ? t.value >= t.limit : t.value <= t.limit);
  const when = new Date().toISOString();
  const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}`;
  const rows = Object.values(f).map(
    (r) => `| ${r.scenario} | ${r.rps} | ${ratio(r.rps, get('echo').rps)} | ${r.p50_ms} | ${r.p99_ms} | ${r.errors} | ${r.non_2xx} | ${r.peak_rss_mb} |`,
  );
  const markdown = [
    `# Benchmark ${when}`,
    '',
    `${machine}; ${CONNECTIONS} connections, ${DURATION} s per scenario after a ${WARMUP_S} s warm-up, median of ${ROUNDS} rounds (the long runs once); gateway with synchronous=FULL unless marked.`,
    '',
    '| scenario | req/s | × echo | p50 ms | p99 ms | errors | non-2xx | peak RSS MB |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...rows,
    '',
    '| target | measured | limit | met |',
    '|---|---:|---:|:---:|',
    ...targets.map((t) => `| ${t.name} | ${t.value} | ${t.kind === 'min' ? '≥' : '≤'} ${t.limit} | ${met(t) ? 'yes' : '**no**'} |`),
    '',
    'Context (not targets): what forwarding alone costs here, and how close the gateway comes to it.',
    '',
    '| ratio | measured |',
    '|---|---:|',
    `| bare reply-from proxy / upstream direct | ${ratio(get('bareProxy').rps, get('direct').rps)} |`,
    `| pass-through / bare reply-from proxy | ${ratio(get('passThrough').rps, get('bareProxy').rps)} |`,
    `| v1 new lead / echo, per round | ${rounds.map((r) => ratio(r.newLead!.rps, r.echo!.rps)).join(', ')} |`,
    '',
  ].join('\n');
  mkdirSync(args.out, { recursive: true });
  const stamp = when.replace(/[:.]/g, '-');
  writeFileSync(join(args.out, `${stamp}.json`), JSON.stringify({ when, machine, connections: CONNECTIONS, duration_s: DURATION, rounds, figures: f, targets: targets.map((t) => ({ ...t, met: met(t) })) }, null, 2) + '\n');
  writeFileSync(join(args.out, `${stamp}.md`), markdown);
  writeFileSync(join(args.out, 'latest.md'), markdown);
  console.log(markdown);
  // A scenario with failed requests measured something else than it says: the run does not count.
  const broken = Object.values(f).filter((r) => r.errors > 0 || r.non_2xx > 0);
  if (broken.length > 0) {
    console.error(`Requests failed in: ${broken.map((r) => r.scenario).join(', ')}. Fix the scenario before reading its figures.`);
    process.exitCode = 1;
  }
}

await main();
