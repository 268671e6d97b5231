// What PostgreSQL itself does for each new lead: a built gateway on a throwaway cluster with
// pg_stat_statements loaded (bench/postgres.ts), new leads posted to it at a fixed concurrency, and the
// server's own counts read around the measured leads: each statement's calls, time, rows, shared
// blocks and WAL bytes; the time of each trigger function (track_functions); the rows and index
// entries written per table, and what the database's connections were doing meanwhile.
// `npm run build && tsx bench/pg-work.ts [leads] [concurrency] [sql]`: `sql` runs before the load (an
// index dropped by a migration made again, say: the state to compare against). With PG_WORK_EXPLAIN=1
// one more new lead is sent, on a gateway whose connections load auto_explain, and the plans of its
// statements (ANALYZE, BUFFERS, WAL, the trigger's statements too) are printed from the server's log.
// Each statement's planning is counted apart (track_planning), the server's CPU is read per kind of
// process from /proc, and with PG_WORK_PERF=<file> the gateway's backends are sampled by `perf record -g`
// during the measured load (read it with `perf report -i <file>`).
import { spawn } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { Pool } from 'undici';
import { CHILD_ADMIN_TOKEN, postJson, spawnGateway } from '../test/support/child-gateway.js';
import { bodyOf } from './load.js';
import { cpuMicros } from './measure.js';
import { startBenchPostgres } from './postgres.js';
import { BENCH_INTEGRATION, leadTemplate } from './templates.js';

const LEADS = Number(process.argv[2] ?? 2_000);
const CONCURRENCY = Number(process.argv[3] ?? 16);
const WARMUP = 300;
const PATH = '/api/integrations/v1/leads/';
const BEFORE_SQL = process.argv[4];

const started = await startBenchPostgres();
if ('reason' in started) throw new Error(started.reason);
const cluster = started;
const database = await cluster.database();
const admin = new pg.Client({ connectionString: database.url });
await admin.connect();
await admin.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
await admin.query("ALTER SYSTEM SET track_functions = 'all'");
// Planning counted apart from execution: a prepared statement planned again for each execution shows here.
await admin.query('ALTER SYSTEM SET pg_stat_statements.track_planning = on');
await admin.query('SELECT pg_reload_conf()');

let gw: Awaited<ReturnType<typeof spawnGateway>> | null = null;
try {
  gw = await spawnGateway({ entry: 'dist', env: { DATABASE_URL: database.url, RATE_LIMIT_PER_MINUTE: '1000000' } });
  const issued = await postJson(
    `${gw.address}/admin/v1/integrations/${BENCH_INTEGRATION}/keys`,
    { authorization: `Bearer ${CHILD_ADMIN_TOKEN}` },
    {},
  );
  if (issued.status !== 201) throw new Error(`issuing a key: ${issued.status}`);
  const headers = { authorization: `Bearer ${issued.body.key as string}`, 'content-type': 'application/json' };
  const client = new Pool(gw.address, { connections: CONCURRENCY });
  const run = `pgwork${Date.now()}`;

  /** Posts leads `from`..`from + count - 1`, CONCURRENCY at a time; every one must be a new lead (201). */
  const drive = async (from: number, count: number) => {
    let next = from;
    const worker = async () => {
      while (next < from + count) {
        const i = next++;
        const res = await client.request({ method: 'POST', path: PATH, headers, body: bodyOf(leadTemplate(run), i) });
        const text = await res.body.text();
        if (res.statusCode !== 201) throw new Error(`lead ${i}: ${res.statusCode} ${text}`);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  };

  if (BEFORE_SQL) await admin.query(BEFORE_SQL);
  await drive(0, WARMUP);
  // The usage counts are flushed once a second: let the warm-up's go before the counts start.
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  await admin.query('SELECT pg_stat_statements_reset()');
  await admin.query('SELECT pg_stat_reset()');
  const walFrom = (await admin.query<{ lsn: string }>('SELECT pg_current_wal_lsn() AS lsn')).rows[0]!.lsn;
  // Each server process's CPU by its kind (the gateway's backends, the WAL writer, ...), read from /proc.
  const processes = async () =>
    (
      await admin.query<{ pid: number; kind: string }>(
        `SELECT pid, CASE WHEN application_name = 'lead-gateway' THEN 'the gateway''s backends' WHEN backend_type = 'client backend' THEN 'other client backends' ELSE backend_type END AS kind
         FROM pg_stat_activity WHERE pid <> pg_backend_pid()`,
      )
    ).rows;
  /** The kernel's share of a process's CPU (system time), in microseconds. */
  const systemMicros = (pid: number) => {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[12]) / 100) * 1e6;
  };
  const cpuOf = (list: { pid: number; kind: string }[]) => {
    const by = new Map<number, { kind: string; us: number; sys: number }>();
    for (const p of list) {
      try {
        by.set(p.pid, { kind: p.kind, us: cpuMicros(p.pid), sys: systemMicros(p.pid) });
      } catch {
        // Gone: its time is not counted by kind.
      }
    }
    return by;
  };
  const perProcessFrom = cpuOf(await processes());
  // PG_WORK_PERF=file: the gateway's backends sampled by perf (call graphs) during the measured load.
  const gatewayBackends = [...perProcessFrom]
    .filter(([, p]) => p.kind === "the gateway's backends")
    .map(([pid]) => pid);
  const perf = process.env.PG_WORK_PERF
    ? spawn('perf', ['record', '-F', '1999', '-g', '-o', process.env.PG_WORK_PERF, '-p', gatewayBackends.join(',')], {
        stdio: 'ignore',
      })
    : null;
  const watching = database.watch();
  const cpuFrom = database.clusterCpuMicros();
  const t0 = Date.now();
  await drive(WARMUP, LEADS);
  const seconds = (Date.now() - t0) / 1000;
  const cpuTo = database.clusterCpuMicros();
  const perProcessTo = cpuOf(await processes());
  if (perf) {
    const exited = new Promise((resolve) => perf.once('exit', resolve));
    perf.kill('SIGINT');
    await exited;
  }
  const states = await watching.stop();
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  // Statistics reach the shared counts when a backend goes idle; ask for a flush of our own and wait.
  await admin.query('SELECT pg_stat_force_next_flush()').catch(() => {});
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const walBytes = Number(
    (await admin.query<{ b: string }>('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1)::bigint AS b', [walFrom]))
      .rows[0]!.b,
  );

  /** A statement's first words; a batch of held-back writes as the tables it writes, in order. */
  const describe = (query: string) =>
    query.startsWith('WITH w0')
      ? `batch: ${[...query.matchAll(/w\d+ AS \((INSERT INTO|UPDATE) (\w+)/g)].map((m) => `${m[1] === 'UPDATE' ? 'update ' : ''}${m[2]}`).join(', ')}`
      : query.slice(0, 90).replace(/\|/g, '\\|');
  const per = (n: number) => (n / LEADS).toFixed(2);
  console.log(
    `# ${cluster.description}; ${LEADS} new leads at concurrency ${CONCURRENCY} in ${seconds.toFixed(1)} s (${(LEADS / seconds).toFixed(0)}/s); server CPU ${cpuFrom === null || cpuTo === null ? '?' : ((cpuTo - cpuFrom) / LEADS).toFixed(0)} us per lead; WAL ${(walBytes / LEADS).toFixed(0)} bytes per lead${BEFORE_SQL ? `; before the load: ${BEFORE_SQL}` : ''}\n`,
  );

  const byKind = new Map<string, { us: number; sys: number }>();
  for (const [pid, to] of perProcessTo) {
    const sum = byKind.get(to.kind) ?? { us: 0, sys: 0 };
    sum.us += to.us - (perProcessFrom.get(pid)?.us ?? 0);
    sum.sys += to.sys - (perProcessFrom.get(pid)?.sys ?? 0);
    byKind.set(to.kind, sum);
  }
  console.log(
    "## The server's CPU by process kind (processes alive at both ends; a connection opened during the load counts whole)\n\n| process | CPU us/lead | of which the kernel's |\n|---|---|---|",
  );
  for (const [kind, t] of [...byKind].sort((a, b) => b[1].us - a[1].us))
    console.log(`| ${kind} | ${(t.us / LEADS).toFixed(0)} | ${(t.sys / LEADS).toFixed(0)} |`);
  console.log('');

  const samples = Object.values(states).reduce((a, b) => a + b, 0);
  console.log(
    `## The database's connections during the load (share of ${samples} samples)\n\n| state | share |\n|---|---|`,
  );
  for (const [what, n] of Object.entries(states).sort((a, b) => b[1] - a[1]))
    console.log(`| ${what} | ${((100 * n) / samples).toFixed(0)}% |`);
  console.log('');

  const statements = await admin.query<Record<string, string>>(
    `SELECT regexp_replace(query, '\\s+', ' ', 'g') AS query, calls, plans, total_plan_time, rows, total_exec_time, mean_exec_time, shared_blks_hit, shared_blks_read, shared_blks_dirtied, shared_blks_written, wal_records, wal_fpi, wal_bytes
       FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) ORDER BY total_exec_time DESC`,
  );
  const total = statements.rows.reduce((s, r) => s + Number(r.total_exec_time), 0);
  const planning = statements.rows.reduce((s, r) => s + Number(r.total_plan_time), 0);
  console.log(
    `## Statements (server execution time ${((total * 1000) / LEADS).toFixed(0)} us per lead, planning ${((planning * 1000) / LEADS).toFixed(0)} us per lead)\n`,
  );
  console.log(
    '| statement | calls/lead | plans/call | rows/call | mean us | us/lead | planning us/lead | blks hit/lead | dirtied/lead | WAL records/lead | WAL bytes/lead |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of statements.rows) {
    if (/pg_stat|pg_current_wal|pg_wal_lsn/.test(r.query!)) continue;
    const calls = Number(r.calls);
    console.log(
      `| ${describe(r.query!)} | ${per(calls)} | ${(Number(r.plans) / Math.max(calls, 1)).toFixed(2)} | ${(Number(r.rows) / Math.max(calls, 1)).toFixed(2)} | ${(Number(r.mean_exec_time) * 1000).toFixed(0)} | ${((Number(r.total_exec_time) * 1000) / LEADS).toFixed(1)} | ${((Number(r.total_plan_time) * 1000) / LEADS).toFixed(1)} | ${per(Number(r.shared_blks_hit))} | ${per(Number(r.shared_blks_dirtied))} | ${per(Number(r.wal_records))} | ${(Number(r.wal_bytes) / LEADS).toFixed(0)} |`,
    );
  }

  const functions = await admin.query<Record<string, string>>(
    'SELECT funcname, calls, total_time, self_time FROM pg_stat_user_functions ORDER BY total_time DESC',
  );
  console.log(
    '\n## Trigger and other functions\n\n| function | calls/lead | us/lead (total) | us/lead (self) |\n|---|---|---|---|',
  );
  for (const r of functions.rows)
    console.log(
      `| ${r.funcname} | ${per(Number(r.calls))} | ${((Number(r.total_time) * 1000) / LEADS).toFixed(1)} | ${((Number(r.self_time) * 1000) / LEADS).toFixed(1)} |`,
    );

  const tables = await admin.query<Record<string, string>>(
    `SELECT t.relname, t.n_tup_ins, t.n_tup_upd, t.n_tup_hot_upd, t.n_tup_del,
            (SELECT count(*) FROM pg_index i WHERE i.indrelid = t.relid) AS indexes,
            (SELECT string_agg(c.relname, ', ' ORDER BY c.relname) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = t.relid) AS index_names
       FROM pg_stat_user_tables t WHERE t.n_tup_ins + t.n_tup_upd + t.n_tup_del > 0 ORDER BY t.n_tup_ins + t.n_tup_upd DESC`,
  );
  console.log(
    '\n## Rows written per lead, by table (an insert or a non-HOT update adds an entry to every index)\n\n| table | inserted | updated (HOT) | deleted | indexes |\n|---|---|---|---|---|',
  );
  for (const r of tables.rows)
    console.log(
      `| ${r.relname} | ${per(Number(r.n_tup_ins))} | ${per(Number(r.n_tup_upd))} (${per(Number(r.n_tup_hot_upd))}) | ${per(Number(r.n_tup_del))} | ${r.indexes}: ${r.index_names} |`,
    );

  const indexes = await admin.query<Record<string, string>>(
    'SELECT relname, indexrelname, idx_scan FROM pg_stat_user_indexes WHERE relname IN (SELECT relname FROM pg_stat_user_tables WHERE n_tup_ins + n_tup_upd > 0) ORDER BY relname, indexrelname',
  );
  console.log('\n## Index scans during the load (scans per lead)\n\n| table | index | scans/lead |\n|---|---|---|');
  for (const r of indexes.rows) console.log(`| ${r.relname} | ${r.indexrelname} | ${per(Number(r.idx_scan))} |`);
  await client.close();

  if (process.env.PG_WORK_EXPLAIN) {
    // Its settings are known once the library is loaded.
    await admin.query("LOAD 'auto_explain'");
    for (const setting of [
      "session_preload_libraries = 'auto_explain'",
      'auto_explain.log_min_duration = 0',
      'auto_explain.log_analyze = on',
      'auto_explain.log_buffers = on',
      'auto_explain.log_wal = on',
      'auto_explain.log_nested_statements = on',
    ])
      await admin.query(`ALTER SYSTEM SET ${setting}`);
    await admin.query('SELECT pg_reload_conf()');
    const dataDir = (await admin.query<{ data_directory: string }>('SHOW data_directory')).rows[0]!.data_directory;
    const logFile = join(dirname(dataDir), 'server.log');
    // A gateway of its own: only connections opened after the change load auto_explain.
    const explained = await spawnGateway({
      entry: 'dist',
      env: { DATABASE_URL: database.url, RATE_LIMIT_PER_MINUTE: '1000000' },
    });
    try {
      const warm = await postJson(
        `${explained.address}${PATH}`,
        headers,
        JSON.parse(bodyOf(leadTemplate(run), 8_000_000)) as object,
      );
      if (warm.status !== 201) throw new Error(`the warm-up lead answered ${warm.status}`);
      const from = statSync(logFile).size;
      const sent = await postJson(
        `${explained.address}${PATH}`,
        headers,
        JSON.parse(bodyOf(leadTemplate(run), 8_000_001)) as object,
      );
      if (sent.status !== 201) throw new Error(`the explained lead answered ${sent.status}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
      console.log('\n## The plans of one new lead (auto_explain)\n\n```');
      console.log(readFileSync(logFile).subarray(from).toString('utf8').trimEnd());
      console.log('```');
    } finally {
      await explained.stop();
    }
  }
} finally {
  // A gateway or a cluster left behind would run on after the bench.
  await gw?.stop();
  await admin.end();
  await cluster.stop();
}
