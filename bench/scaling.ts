// `npm run bench:scaling`: the figures of docs/scaling.md's capacity model, measured on this machine.
//
// 1. Group commit at the primary: pgbench makes one-row commits from 1 to 64 clients on a throwaway
//    cluster at its default durability, and pg_stat_wal says how many WAL flushes they took.
// 2. The gateway on PostgreSQL: v1 new leads at a fixed load, directly, through a relay that adds a
//    round-trip time like a primary in another rack or zone (bench/delay-proxy.ts), with the default
//    pool and a larger one; then two replicas on one database, the load split between them.
// Options: --duration <s> (default 5), --connections <n> (default 32), --delay <one-way ms> (default 1).
// Writes a Markdown table and the raw figures to bench/results/scaling-<time>.{md,json}.
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { CHILD_ADMIN_TOKEN, ROOT, postJson, spawnGateway, type ChildGateway } from '../test/support/child-gateway.js';
import { measure as measureWith, type Figures, type Target } from './measure.js';
import { startBenchPostgres, type BenchCluster, type BenchDatabase } from './postgres.js';
import { BENCH_INTEGRATION } from './templates.js';

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '32' },
    delay: { type: 'string', default: '1' },
    out: { type: 'string', default: join(ROOT, 'bench', 'results') },
  },
});
const DURATION = Number(args.duration);
const CONNECTIONS = Number(args.connections);
const DELAY_MS = Number(args.delay);
const SETTINGS = { connections: CONNECTIONS, durationS: DURATION, warmupS: 2 };
const COMMIT_CLIENTS = [1, 4, 16, 64];
const LEADS = '/api/integrations/v1/leads/';

interface CommitFigures {
  clients: number;
  commits_per_s: number;
  latency_ms: number;
  wal_flushes_per_s: number;
  commits_per_flush: number;
}

interface GatewayRow extends Figures {
  setting: string;
  pool: number;
  rtt_ms: number;
}

function pgbenchBinary(): string | null {
  const onPath = spawnSync('sh', ['-c', 'command -v pgbench'], { encoding: 'utf8' }).stdout.trim();
  if (onPath) return onPath;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const found = readdirSync(root)
    .map((v) => join(root, v, 'bin', 'pgbench'))
    .filter((p) => existsSync(p));
  return found.at(-1) ?? null;
}

async function groupCommit(database: BenchDatabase): Promise<CommitFigures[] | string> {
  const pgbench = pgbenchBinary();
  if (!pgbench) return 'no pgbench on this machine';
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    await client.query('CREATE TABLE commit_probe (id bigserial PRIMARY KEY, payload text)');
    const folder = mkdtempSync(join(tmpdir(), 'lead-gateway-commits-'));
    const script = join(folder, 'commit.sql');
    writeFileSync(script, "INSERT INTO commit_probe (payload) VALUES (repeat('x', 200));\n");
    const rows: CommitFigures[] = [];
    for (const clients of COMMIT_CLIENTS) {
      await client.query("SELECT pg_stat_reset_shared('wal')");
      const out = execFileSync(
        pgbench,
        [
          '-n',
          '-c',
          String(clients),
          '-j',
          String(Math.min(clients, 2)),
          '-T',
          String(DURATION),
          '-f',
          script,
          database.url,
        ],
        { encoding: 'utf8' },
      );
      const flushes = Number(
        (await client.query<{ wal_sync: string }>('SELECT wal_sync FROM pg_stat_wal')).rows[0]!.wal_sync,
      );
      const done = Number(/actually processed: (\d+)/.exec(out)?.[1] ?? 0);
      const tps = Number(/tps = ([\d.]+)/.exec(out)?.[1] ?? 0);
      const latency = Number(/latency average = ([\d.]+) ms/.exec(out)?.[1] ?? 0);
      rows.push({
        clients,
        commits_per_s: Math.round(tps),
        latency_ms: latency,
        wal_flushes_per_s: Math.round(flushes / DURATION),
        commits_per_flush: Math.round((done / Math.max(1, flushes)) * 10) / 10,
      });
      console.error(
        `  group commit, ${clients} clients: ${Math.round(tps)} commits/s, ${rows.at(-1)!.commits_per_flush} commits per WAL flush`,
      );
    }
    rmSync(folder, { recursive: true, force: true });
    return rows;
  } finally {
    await client.end();
  }
}

/** The relay of bench/delay-proxy.ts in front of the database, and the database's URL through it. */
async function relay(url: string, delayMs: number, children: { stop(): unknown }[]): Promise<string> {
  const target = new URL(url);
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'bench', 'delay-proxy.ts'), target.hostname, target.port, String(delayMs)],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  children.push({ stop: () => child.kill('SIGTERM') });
  const port = await new Promise<string>((resolve, reject) => {
    child.on('exit', (code) => reject(new Error(`the relay exited with ${code}`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      const m = /listening (\d+)/.exec(chunk.toString());
      if (m) resolve(m[1]!);
    });
  });
  const through = new URL(url);
  through.port = port;
  return through.toString();
}

/** The median time of `SELECT 1` over `url`: the round trip a statement pays there. */
async function roundTripMs(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const times: number[] = [];
  for (let i = 0; i < 60; i++) {
    const start = performance.now();
    await client.query('SELECT 1');
    times.push(performance.now() - start);
  }
  await client.end();
  times.sort((a, b) => a - b);
  return Math.round(times[30]! * 100) / 100;
}

async function startGateway(url: string, pool: number, children: { stop(): unknown }[]): Promise<ChildGateway> {
  const gw = await spawnGateway({
    entry: 'dist',
    env: { DATABASE_URL: url, DATABASE_POOL_SIZE: String(pool), RATE_LIMIT_PER_MINUTE: '1000000' },
  });
  children.push(gw);
  return gw;
}

async function issueKey(gw: ChildGateway): Promise<string> {
  const issued = await postJson(
    `${gw.address}/admin/v1/integrations/${BENCH_INTEGRATION}/keys`,
    { authorization: `Bearer ${CHILD_ADMIN_TOKEN}` },
    {},
  );
  if (issued.status !== 201) throw new Error(`issuing a key: ${issued.status} ${JSON.stringify(issued.body)}`);
  return issued.body.key as string;
}

let runs = 0;
const leadBody = (run: string) =>
  JSON.stringify({
    event_id: `${run}-{i}`,
    external_contact_id: `telegram:${run}-{i}`,
    first_name: 'Scale',
    phone: '+9989{i+10000000}',
    answers: { course: 'python', age: 27 },
  });

/** New leads on one gateway at `connections`; figures per request from its process. */
async function newLeads(
  gw: ChildGateway,
  key: string,
  connections: number,
  postgres?: BenchDatabase,
): Promise<Figures> {
  const target: Target = { pid: gw.pid, gateway: gw.address, ...(postgres ? { postgres } : {}) };
  const run = `scale${++runs}-${Date.now().toString(36)}`;
  return measureWith(
    { ...SETTINGS, connections },
    `new lead`,
    { url: `${gw.address}${LEADS}`, headers: { authorization: `Bearer ${key}` }, body: leadBody(run) },
    target,
  );
}

async function gatewayRows(cluster: BenchCluster, children: { stop(): unknown }[]): Promise<GatewayRow[]> {
  const rows: GatewayRow[] = [];
  const one = async (setting: string, database: BenchDatabase, url: string, pool: number) => {
    const gw = await startGateway(url, pool, children);
    const key = await issueKey(gw);
    const rtt = await roundTripMs(url);
    rows.push({ ...(await newLeads(gw, key, CONNECTIONS, database)), setting, pool, rtt_ms: rtt });
    await gw.stop();
  };
  const direct = await cluster.database();
  await one('one replica, same machine', direct, direct.url, 10);
  const relayed = await cluster.database();
  await one('one replica, relay without delay', relayed, await relay(relayed.url, 0, children), 10);
  for (const pool of [10, 40]) {
    const far = await cluster.database();
    await one(
      `one replica, ${DELAY_MS} ms each way${pool === 10 ? '' : `, pool ${pool}`}`,
      far,
      await relay(far.url, DELAY_MS, children),
      pool,
    );
  }

  // Two replicas on one database, half the load each: what the machine's two cores give in all.
  const shared = await cluster.database();
  const a = await startGateway(shared.url, 10, children);
  const b = await startGateway(shared.url, 10, children);
  const key = await issueKey(a);
  const [fa, fb] = await Promise.all([newLeads(a, key, CONNECTIONS / 2), newLeads(b, key, CONNECTIONS / 2)]);
  const sent = fa.sent + fb.sent;
  rows.push({
    ...fa,
    scenario: 'new lead',
    rps: fa.rps + fb.rps,
    requests: fa.requests + fb.requests,
    sent,
    p50_ms: Math.max(fa.p50_ms, fb.p50_ms),
    p99_ms: Math.max(fa.p99_ms, fb.p99_ms),
    errors: fa.errors + fb.errors,
    non_2xx: fa.non_2xx + fb.non_2xx,
    cpu_us:
      fa.cpu_us !== null && fb.cpu_us !== null ? Math.round((fa.cpu_us * fa.sent + fb.cpu_us * fb.sent) / sent) : null,
    setting: 'two replicas, same machine',
    pool: 10,
    rtt_ms: await roundTripMs(shared.url),
  });
  await Promise.all([a.stop(), b.stop()]);
  return rows;
}

function markdown(server: string, commits: CommitFigures[] | string, rows: GatewayRow[]): string {
  const lines = [
    `# Scaling figures (${new Date().toISOString()})`,
    '',
    `${cpus().length} cores, ${server}; ${DURATION} s per row after a 2 s warm-up; v1 new leads at ${CONNECTIONS} connections.`,
    '',
    '## Group commit at the primary (pgbench, one-row commits, default durability)',
    '',
  ];
  if (typeof commits === 'string') lines.push(`Not measured: ${commits}.`);
  else {
    lines.push(
      '| clients | commits/s | latency ms | WAL flushes/s | commits per flush |',
      '|---:|---:|---:|---:|---:|',
    );
    for (const c of commits)
      lines.push(
        `| ${c.clients} | ${c.commits_per_s} | ${c.latency_ms} | ${c.wal_flushes_per_s} | ${c.commits_per_flush} |`,
      );
  }
  lines.push(
    '',
    '## The gateway on PostgreSQL: new leads',
    '',
    '| setting | round trip ms | pool | req/s | p50 ms | p99 ms | gateway CPU µs/req | PostgreSQL CPU µs/req | round trips/req | statements/req | errors + non-2xx |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  );
  const or = (v: number | null) => (v === null ? '–' : String(v));
  for (const r of rows)
    lines.push(
      `| ${r.setting} | ${r.rtt_ms} | ${r.pool} | ${r.rps} | ${r.p50_ms} | ${r.p99_ms} | ${or(r.cpu_us)} | ${or(r.pg_cpu_us)} | ${or(r.round_trips)} | ${or(r.statements)} | ${r.errors + r.non_2xx} |`,
    );
  return lines.join('\n') + '\n';
}

async function main(): Promise<void> {
  const children: { stop(): unknown }[] = [];
  const stopAll = async () => {
    for (const child of [...children].reverse()) await child.stop();
  };
  process.on('SIGINT', () => void stopAll().finally(() => process.exit(130)));
  try {
    const started = await startBenchPostgres();
    if ('reason' in started) throw new Error(`no PostgreSQL: ${started.reason}`);
    children.push({ stop: () => started.stop() });
    console.error(`scaling figures on ${started.description}`);
    mkdirSync(args.out, { recursive: true });
    const commits = await groupCommit(await started.database());
    const rows = await gatewayRows(started, children);
    const text = markdown(started.description, commits, rows);
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    writeFileSync(join(args.out, `scaling-${stamp}.md`), text);
    writeFileSync(join(args.out, `scaling-${stamp}.json`), JSON.stringify({ commits, rows }, null, 2) + '\n');
    console.log(text);
  } finally {
    await stopAll();
  }
}

await main();
