// `npm run bench`: the gateway under load on 127.0.0.1, every figure a ratio to a baseline of the same run.
//
// One run starts a plain Fastify JSON echo server (the baseline), the store's units of work alone in a
// process without HTTP (bench/store-unit.ts), a stand-in legacy upstream, the built gateway on fresh
// SQLite files and, when a throwaway PostgreSQL cluster can be started, the built gateway on a fresh
// database of it; it measures each scenario with wrk (bench/load.ts) at a fixed number of
// connections. It prints a Markdown table and writes it, with the raw figures as JSON, to bench/results/.
// Options: --duration <s> (measured seconds per scenario, default 8), --rounds <n> (default 3: the
// short scenarios run once per round and the median is reported), --connections <n> (default 32),
// --submissions <n> (the long run's size, default 100000), --out <dir>, --only engines (the echo and
// each path on both engines, nothing else: a few minutes). The PostgreSQL cluster comes
// from the machine's binaries (or TEST_DATABASE_URL, as for the tests); without one the bench says so
// in one line and measures the SQLite rows only.
import { spawn, type ChildProcess } from 'node:child_process';
import Database from 'better-sqlite3';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  CHILD_ADMIN_TOKEN,
  ROOT,
  memoryOf,
  postJson,
  spawnGateway,
  type ChildGateway,
} from '../test/support/child-gateway.js';
import { freePort } from '../test/support/postgres.js';
import { combine, measure as measureWith, median, type Figures, type Load, type Target } from './measure.js';
import { bodyOf, generatorName } from './load.js';
import { probeOutcomes } from './outcomes.js';
import { startBenchPostgres, type BenchCluster, type BenchDatabase } from './postgres.js';
import { report, type PostgresDetail, type StoreUnitFigures, type StoreUnits } from './report.js';
import { BENCH_INTEGRATION, answersTemplate, leadTemplate, legacyLeadTemplate, replayTemplate } from './templates.js';

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '32' },
    submissions: { type: 'string', default: '100000' },
    out: { type: 'string', default: join(ROOT, 'bench', 'results') },
    only: { type: 'string' },
  },
});
if (args.only !== undefined && args.only !== 'engines')
  throw new Error(`--only takes one value, engines (not ${args.only})`);
/** `engines`: the echo and the four paths on both engines only (the quick comparison). */
const ONLY: 'engines' | null = args.only === 'engines' ? 'engines' : null;
const DURATION = Number(args.duration);
const CONNECTIONS = Number(args.connections);
const SUBMISSIONS = Number(args.submissions);
const ROUNDS = Math.max(1, Number(args.rounds));
const WARMUP_S = 2;
const LEGACY_KEY = 'bench-legacy-bot-key-0123456789';
const LEADS = '/api/integrations/v1/leads/';
const ANSWERS = '/api/integrations/v1/leads/answers/';
/** Where the stored-data scenario's numbers start: past every number the long run used. */
const FILLED_OFFSET = 20_000_000;
/** Numbers each round of the stored-data scenario apart (a round sends far fewer requests). */
const FILLED_STRIDE = 1_000_000;
/** Units of each kind the store-unit reference measures per round. */
const STORE_UNITS = 5_000;
const SETTINGS = { connections: CONNECTIONS, durationS: DURATION, warmupS: WARMUP_S };

const measure = (scenario: string, load: Load, target: Target | number, warmup = true): Promise<Figures> =>
  measureWith(SETTINGS, scenario, load, typeof target === 'number' ? { pid: target } : target, warmup);

/** A gateway as a measured target: its /metrics tells when the requests in flight are done. */
const at = (gw: ChildGateway): Target => ({ pid: gw.pid, gateway: gw.address });

/** The store-unit reference on a fresh file in `work`: its one JSON line. */
async function storeUnits(work: string, round: number, children: { stop(): unknown }[]): Promise<StoreUnits> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(ROOT, 'bench', 'store-unit.ts'),
      join(work, `unit${round}.db`),
      '--units',
      String(STORE_UNITS),
    ],
    {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  children.push({ stop: () => child.kill() });
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  // 'close', not 'exit': stdout may still hold the line when the process has exited.
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`the store-unit reference exited with ${code}`);
  const units = JSON.parse(out) as StoreUnits;
  console.error(
    `  store units alone: new lead ${Math.round(units.new_lead_cpu_us)} µs, replay ${Math.round(units.replay_cpu_us)} µs, answers ${Math.round(units.answers_cpu_us)} µs`,
  );
  return units;
}

/** A reference server from bench/servers.ts, resolved with its address once it listens. */
async function startServer(
  mode: 'echo' | 'upstream' | 'proxy' | 'undici',
  target?: string,
): Promise<{ address: string; child: ChildProcess }> {
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

/**
 * nginx as a reverse proxy to the upstream, when the machine has it: the floor of what forwarding
 * costs, in one process (no master) so its CPU is the measured process's.
 */
async function startNginx(work: string, upstream: string): Promise<{ address: string; child: ChildProcess } | null> {
  const binary = ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/local/nginx/sbin/nginx'].find((p) => existsSync(p));
  if (!binary) return null;
  const port = await freePort();
  const dir = join(work, 'nginx');
  mkdirSync(join(dir, 'logs'), { recursive: true });
  const target = new URL(upstream);
  writeFileSync(
    join(dir, 'nginx.conf'),
    `daemon off;
master_process off;
worker_processes 1;
error_log ${join(dir, 'logs', 'error.log')} warn;
pid ${join(dir, 'nginx.pid')};
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy; fastcgi_temp_path ${dir}/fcgi;
  uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;
  upstream legacy { server ${target.host}; keepalive 64; }
  server {
    listen 127.0.0.1:${port};
    location / { proxy_pass http://legacy; proxy_http_version 1.1; proxy_set_header Connection ""; }
  }
}
`,
  );
  const child = spawn(binary, ['-p', dir, '-c', join(dir, 'nginx.conf')], { stdio: ['ignore', 'ignore', 'inherit'] });
  const address = `http://127.0.0.1:${port}`;
  for (let tries = 0; tries < 50; tries++) {
    if (child.exitCode !== null) return null;
    const up = await fetch(`${address}/api/bots/api/employees/`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) return { address, child };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill();
  return null;
}

/** The built gateway on a SQLite file (`FULL` or `OFF`), or on a PostgreSQL database (a URL). */
async function startGateway(
  store: { path: string; synchronous: 'FULL' | 'OFF' } | { url: string },
  upstream?: string,
  extra: Record<string, string> = {},
): Promise<ChildGateway> {
  return spawnGateway({
    entry: 'dist',
    env: {
      // PostgreSQL keeps the gateway's default pool (DATABASE_POOL_SIZE, 10 connections).
      ...('url' in store
        ? { DATABASE_URL: store.url }
        : { DATABASE_PATH: store.path, SQLITE_SYNCHRONOUS: store.synchronous }),
      // The limiter still runs (its cost is part of every figure) but never refuses.
      RATE_LIMIT_PER_MINUTE: '1000000',
      ...(upstream ? { LEGACY_UPSTREAM_URL: upstream } : {}),
      ...extra,
    },
  });
}

async function issueKeys(gw: ChildGateway): Promise<string> {
  const admin = { authorization: `Bearer ${CHILD_ADMIN_TOKEN}` };
  const issued = await postJson(`${gw.address}/admin/v1/integrations/${BENCH_INTEGRATION}/keys`, admin, {});
  if (issued.status !== 201) throw new Error(`issuing a key: ${issued.status} ${JSON.stringify(issued.body)}`);
  const imported = await postJson(`${gw.address}/admin/v1/integrations/${BENCH_INTEGRATION}/keys/import`, admin, {
    key: LEGACY_KEY,
  });
  if (imported.status !== 201)
    throw new Error(`importing the legacy key: ${imported.status} ${JSON.stringify(imported.body)}`);
  return issued.body.key as string;
}

/**
 * How many of a new-lead scenario's first measured events the replay and answers scenarios use: at
 * most 1,000, and never more than it stored (PostgreSQL's slower runs store fewer), or a "replay"
 * would be new.
 */
const storedOf = (newLead: Figures) => Math.max(1, Math.min(1000, newLead.sent));

/** The forwarding references: the upstream alone, then each bare proxy to it. */
async function references(
  work: string,
  upstream: { address: string; child: ChildProcess },
  figures: Record<string, Figures>,
  children: { stop(): unknown }[],
): Promise<void> {
  figures.direct = await measure(
    'upstream direct',
    { url: `${upstream.address}/api/bots/api/employees/`, method: 'GET' },
    upstream.child.pid!,
  );
  const proxy = await startServer('proxy', upstream.address);
  children.push({ stop: () => proxy.child.kill() });
  figures.bareProxy = await measure(
    'bare reply-from proxy',
    { url: `${proxy.address}/api/bots/api/employees/`, method: 'GET' },
    proxy.child.pid!,
  );
  proxy.child.kill();
  const undiciProxy = await startServer('undici', upstream.address);
  children.push({ stop: () => undiciProxy.child.kill() });
  figures.undiciProxy = await measure(
    'bare undici stream proxy',
    { url: `${undiciProxy.address}/api/bots/api/employees/`, method: 'GET' },
    undiciProxy.child.pid!,
  );
  undiciProxy.child.kill();
  const nginx = await startNginx(work, upstream.address);
  if (nginx) {
    children.push({ stop: () => nginx.child.kill() });
    figures.nginxProxy = await measure(
      'nginx proxy',
      { url: `${nginx.address}/api/bots/api/employees/`, method: 'GET' },
      nginx.child.pid!,
    );
    nginx.child.kill();
  }
}

/**
 * One round of the short scenarios, each server fresh; `round` keeps event_ids apart between rounds.
 * Its figures, and the store's units alone measured in it.
 */
async function shortRound(
  work: string,
  round: number,
  children: { stop(): unknown }[],
  cluster: BenchCluster | null,
  detail: PostgresDetail,
): Promise<{ figures: Record<string, Figures>; units: StoreUnits | null }> {
  const figures: Record<string, Figures> = {};
  // 1. The baseline: a plain Fastify JSON echo; and the store's units of work without any HTTP.
  const echo = await startServer('echo');
  children.push({ stop: () => echo.child.kill() });
  figures.echo = await measure(
    'echo baseline',
    { url: `${echo.address}/echo`, body: leadTemplate(`echo${round}`) },
    echo.child.pid!,
  );
  echo.child.kill();
  const units = ONLY ? null : await storeUnits(work, round, children);

  // 2. The upstream legacy API alone, a bare proxy to it, then the gateway with synchronous=FULL in front of it.
  const upstream = await startServer('upstream');
  children.push({ stop: () => upstream.child.kill() });
  if (!ONLY) await references(work, upstream, figures, children);
  const full = await startGateway({ path: join(work, `full${round}.db`), synchronous: 'FULL' }, upstream.address);
  children.push(full);
  const v1Key = await issueKeys(full);
  const v1 = { authorization: `Bearer ${v1Key}` };
  const run = `new${round}`;
  figures.newLead = await measure(
    'v1 new lead (FULL)',
    { url: `${full.address}${LEADS}`, headers: v1, body: leadTemplate(run) },
    at(full),
  );
  // Replays of events the previous scenario stored, byte for byte the same bodies.
  const stored = storedOf(figures.newLead);
  figures.replay = await measure(
    'v1 replay',
    { url: `${full.address}${LEADS}`, headers: v1, body: replayTemplate(run, stored) },
    at(full),
  );
  figures.answers = await measure(
    'v1 answers',
    { url: `${full.address}${ANSWERS}`, headers: v1, body: answersTemplate(run, stored) },
    at(full),
  );
  figures.legacy = await measure(
    'legacy POST leads/',
    {
      url: `${full.address}/api/bots/api/leads/`,
      headers: { 'x-bot-api-key': LEGACY_KEY },
      body: legacyLeadTemplate(),
    },
    at(full),
  );
  if (!ONLY)
    figures.passThrough = await measure(
      'legacy pass-through',
      { url: `${full.address}/api/bots/api/employees/`, method: 'GET', headers: { 'x-bot-api-key': LEGACY_KEY } },
      at(full),
    );
  await full.stop();
  upstream.child.kill();
  if (!ONLY) await durabilityAndChecks(work, round, run, figures, children);

  // 4. The same new leads, replays, answers and legacy leads on PostgreSQL (fsync and synchronous_commit on).
  if (cluster) Object.assign(figures, await postgresScenarios(cluster, run, round === 1 ? detail : null, children));
  return { figures, units };
}

/** Durability's price and the response checks' on SQLite: the new lead at synchronous=OFF, and with RESPONSE_CHECKS=on. */
async function durabilityAndChecks(
  work: string,
  round: number,
  run: string,
  figures: Record<string, Figures>,
  children: { stop(): unknown }[],
): Promise<void> {
  // 3. Durability's price: the same submissions with synchronous=OFF.
  const off = await startGateway({ path: join(work, `off${round}.db`), synchronous: 'OFF' });
  children.push(off);
  const offKey = await issueKeys(off);
  figures.newLeadOff = await measure(
    'v1 new lead (OFF)',
    { url: `${off.address}${LEADS}`, headers: { authorization: `Bearer ${offKey}` }, body: leadTemplate(run) },
    at(off),
  );
  await off.stop();

  // 3b. What checking every response against its schema costs (RESPONSE_CHECKS=on: the tests' setting).
  const checked = await startGateway({ path: join(work, `checked${round}.db`), synchronous: 'FULL' }, undefined, {
    RESPONSE_CHECKS: 'on',
  });
  children.push(checked);
  const checkedKey = { authorization: `Bearer ${await issueKeys(checked)}` };
  figures.newLeadChecked = await measure(
    'v1 new lead (RESPONSE_CHECKS=on)',
    { url: `${checked.address}${LEADS}`, headers: checkedKey, body: leadTemplate(run) },
    at(checked),
  );
  figures.replayChecked = await measure(
    'v1 replay (RESPONSE_CHECKS=on)',
    {
      url: `${checked.address}${LEADS}`,
      headers: checkedKey,
      body: replayTemplate(run, storedOf(figures.newLeadChecked)),
    },
    at(checked),
  );
  await checked.stop();
}

/** The PostgreSQL rows of one round; the first round also lists one new lead's statements into `detail`. */
async function postgresScenarios(
  cluster: BenchCluster,
  run: string,
  detail: PostgresDetail | null,
  children: { stop(): unknown }[],
): Promise<Record<string, Figures>> {
  const database: BenchDatabase = await cluster.database();
  const gw = await startGateway({ url: database.url });
  children.push(gw);
  const headers = { authorization: `Bearer ${await issueKeys(gw)}` };
  const target = { ...at(gw), postgres: database };
  const figures: Record<string, Figures> = {};
  figures.newLeadPg = await measure(
    'v1 new lead (PostgreSQL)',
    { url: `${gw.address}${LEADS}`, headers, body: leadTemplate(run) },
    target,
  );
  if (detail) detail.loadStatements = await database.statements();
  const stored = storedOf(figures.newLeadPg);
  figures.replayPg = await measure(
    'v1 replay (PostgreSQL)',
    { url: `${gw.address}${LEADS}`, headers, body: replayTemplate(run, stored) },
    target,
  );
  figures.answersPg = await measure(
    'v1 answers (PostgreSQL)',
    { url: `${gw.address}${ANSWERS}`, headers, body: answersTemplate(run, stored) },
    target,
  );
  figures.legacyPg = await measure(
    'legacy POST leads/ (PostgreSQL)',
    { url: `${gw.address}/api/bots/api/leads/`, headers: { 'x-bot-api-key': LEGACY_KEY }, body: legacyLeadTemplate() },
    target,
  );
  if (detail) {
    // A new lead's three outcomes, each sent alone: the load above makes only new persons.
    detail.outcomes = await probeOutcomes(gw, headers, run, stored, database);
    // One new lead alone, on a warm gateway and pool: the statements it makes, in order. The usage
    // counts the load left are written first (they are flushed once a second), so that flush is not listed.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    detail.oneNewLead = await database.trace(async () => {
      // A phone no scenario uses: a new person, as in the new-lead scenario.
      const sent = await postJson(`${gw.address}${LEADS}`, headers, {
        ...(JSON.parse(bodyOf(leadTemplate(`${run}-alone`), 0)) as object),
        phone: '+998931234567',
      });
      if (sent.status !== 201) throw new Error(`the traced new lead answered ${sent.status}`);
    });
  }
  await gw.stop();
  return figures;
}

/**
 * The stored-data scenario must store what its name says: a lead and a person per answered request
 * (once it reused the long run's phone numbers, and every request attached to a stored person).
 */
function checkNewPersons(path: string, atLeast: number): void {
  const db = new Database(path, { readonly: true });
  try {
    const count = (table: string) => (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
    const [contacts, leads] = [count('contacts'), count('leads')];
    if (contacts < atLeast || leads < atLeast)
      throw new Error(
        `the stored-data scenario stored ${contacts} persons and ${leads} leads, fewer than the ${atLeast} it answered`,
      );
  } finally {
    db.close();
  }
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'lead-gateway-bench-'));
  const children: { stop(): unknown }[] = [];
  let stopping: Promise<void> | null = null;
  // Servers last started first: the gateways end before the cluster they use.
  const stopAll = () =>
    (stopping ??= (async () => {
      for (const child of [...children].reverse()) await child.stop();
      rmSync(work, { recursive: true, force: true });
    })());
  // pg_ctl starts the cluster in a session of its own: an interrupted run must stop it, or it outlives
  // the bench. Listening for every signal (not once): tsx relays Ctrl-C a second time, and a signal
  // nobody listens for would end the process in the middle of stopping.
  const interrupted = () => void stopAll().finally(() => process.exit(130));
  process.on('SIGINT', interrupted);
  process.on('SIGTERM', interrupted);
  try {
    console.error(
      `lead-gateway benchmark${ONLY ? ` (${ONLY} only)` : ''}: ${ROUNDS} rounds, ${CONNECTIONS} connections, ${DURATION} s per scenario (after ${WARMUP_S} s warm-up)`,
    );
    const started = await startBenchPostgres();
    const cluster = 'reason' in started ? null : started;
    if (cluster) children.push({ stop: () => cluster.stop() });
    const detail: PostgresDetail = {
      server: cluster ? cluster.description : `not measured: ${(started as { reason: string }).reason}`,
      loadStatements: [],
      oneNewLead: null,
      outcomes: [],
    };
    console.error(
      cluster
        ? `${detail.server}: a throwaway cluster beside the SQLite files`
        : `PostgreSQL ${detail.server}; the SQLite rows only`,
    );
    // These machines are shared: a neighbour's burst can halve one measurement. Every short scenario is
    // run in each round, next to its baseline, and the median over the rounds is reported.
    const rounds: Record<string, Figures>[] = [];
    const unitRounds: StoreUnits[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      console.error(`round ${round} of ${ROUNDS}`);
      const measured = await shortRound(work, round, children, cluster, detail);
      rounds.push(measured.figures);
      if (measured.units) unitRounds.push(measured.units);
    }
    const figures = combine(rounds);
    const settings = {
      connections: CONNECTIONS,
      durationS: DURATION,
      warmupS: WARMUP_S,
      rounds: ROUNDS,
      submissions: SUBMISSIONS,
      generator: generatorName(),
      out: args.out,
      only: ONLY,
    };
    if (ONLY) {
      report(figures, rounds, detail, null, settings);
      return;
    }

    // 5. A long run: SUBMISSIONS new leads on a fresh database, the process's peak memory over all of it.
    const longDb = join(work, 'long.db');
    const long = await startGateway({ path: longDb, synchronous: 'FULL' });
    children.push(long);
    const longKey = await issueKeys(long);
    figures.long = await measure(
      `${SUBMISSIONS} submissions`,
      {
        url: `${long.address}${LEADS}`,
        headers: { authorization: `Bearer ${longKey}` },
        body: leadTemplate('long'),
        amount: SUBMISSIONS,
      },
      at(long),
      false,
    );
    figures.long.peak_rss_mb = Math.round((memoryOf(long.pid)?.peak ?? 0) / 1048576);
    await long.stop();

    // 6. New leads with those leads already stored: new persons too, numbered past the stored ones so
    // that no phone matches a stored person. One restarted process per round, as for the empty figure
    // (one process's figure can stay off another's of the same build for its life: docs/performance.md).
    const filledRounds: Record<string, Figures>[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const filled = await startGateway({ path: longDb, synchronous: 'FULL' });
      children.push(filled);
      const offset = FILLED_OFFSET + round * FILLED_STRIDE;
      filledRounds.push({
        filled: await measure(
          `v1 new lead (${SUBMISSIONS} stored)`,
          {
            url: `${filled.address}${LEADS}`,
            headers: { authorization: `Bearer ${longKey}` },
            body: leadTemplate('filled'),
            offset,
          },
          at(filled),
        ),
      });
      await filled.stop();
    }
    figures.newLeadFilled = combine(filledRounds).filled!;
    checkNewPersons(longDb, SUBMISSIONS + figures.newLeadFilled.requests);

    const units: StoreUnitFigures = {
      concurrency: unitRounds[0]!.concurrency,
      new_lead_cpu_us: median(unitRounds.map((u) => u.new_lead_cpu_us)),
      replay_cpu_us: median(unitRounds.map((u) => u.replay_cpu_us)),
      answers_cpu_us: median(unitRounds.map((u) => u.answers_cpu_us)),
      rounds: unitRounds,
    };
    report(figures, rounds, detail, units, settings);
  } finally {
    await stopAll();
  }
}

await main();
