// The bench's PostgreSQL: a throwaway cluster (test/support/postgres.ts) at its default durability
// (fsync and synchronous_commit on) with pg_stat_statements loaded, so the statements a gateway sends
// are counted by the server itself, and the cluster's CPU read from /proc.
import { readFileSync, statSync } from 'node:fs';
import pg from 'pg';
import { freshDatabase, startPostgres } from '../test/support/postgres.js';
import { cpuMicros } from './measure.js';

/** One statement as pg_stat_statements sums it over a measured run. */
export interface StatementStats {
  query: string;
  calls: number;
  total_ms: number;
}

/** A statement the server logged, in the order it ran. */
export interface LoggedStatement {
  /** The server process that ran it: one per connection. */
  backend: number;
  /** The prepared statement's name, or null for a simple query (BEGIN, COMMIT). */
  name: string | null;
  sql: string;
}

/** A fresh database of the bench cluster, for one gateway. */
export interface BenchDatabase {
  url: string;
  /** Forgets the counted statements (of every database). */
  resetStatements(): Promise<void>;
  /** Statements this database ran since the last reset, or null without pg_stat_statements. */
  statementCalls(): Promise<number | null>;
  /** The same, statement by statement, most server time first. */
  statements(): Promise<StatementStats[]>;
  /** CPU time of every process of the cluster so far (exited backends included), or null for a server elsewhere. */
  clusterCpuMicros(): number | null;
  /** The statements the server ran for `work`, in order, from its log; null for a server elsewhere. */
  trace(work: () => Promise<void>): Promise<LoggedStatement[] | null>;
  /** Samples what this database's backends are doing until `stop`, which answers the count of each state. */
  watch(): { stop(): Promise<Record<string, number>> };
}

/** How often `watch` looks at pg_stat_activity. */
const WATCH_INTERVAL_MS = 50;

export interface BenchCluster {
  /** The server's version and what the bench could read from it. */
  description: string;
  database(): Promise<BenchDatabase>;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts the cluster, or says why not (the bench then runs the SQLite rows only). */
export async function startBenchPostgres(): Promise<BenchCluster | { reason: string }> {
  let started;
  try {
    started = await startPostgres({
      settings: { shared_preload_libraries: 'pg_stat_statements', 'pg_stat_statements.track_utility': 'on' },
    });
  } catch (error) {
    return { reason: `the cluster did not start: ${(error as Error).message.split('\n')[0]}` };
  }
  if ('reason' in started) return started;
  const cluster = started;
  const admin = new pg.Client({ connectionString: cluster.url });
  try {
    await admin.connect();
  } catch (error) {
    await cluster.stop().catch(() => {});
    return { reason: `cannot connect to ${new URL(cluster.url).host}: ${(error as Error).message}` };
  }
  const adminBackend = (await admin.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  const version = (await admin.query<{ server_version: string }>('SHOW server_version')).rows[0]!.server_version;
  // A server given by TEST_DATABASE_URL may not have the extension loaded: then no round trips are counted.
  const counting = await admin.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements').then(
    () => admin.query('SELECT 1 FROM pg_stat_statements LIMIT 1').then(() => true),
    () => false,
  );
  const postmaster = cluster.local
    ? Number(readFileSync(`${cluster.local.dataDir}/postmaster.pid`, 'utf8').split('\n')[0])
    : null;

  /** The postmaster with the children it reaped, and every live child (backends, WAL writer, checkpointer...). */
  const clusterCpuMicros = (): number | null => {
    if (postmaster === null) return null;
    let total = cpuMicros(postmaster, true);
    const children = readFileSync(`/proc/${postmaster}/task/${postmaster}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter(Boolean);
    for (const child of children) {
      try {
        total += cpuMicros(Number(child));
      } catch {
        // Exited between the listing and the read: its time moves to the postmaster's reaped children.
      }
    }
    return total;
  };

  const setLogging = async (value: string | null) => {
    await admin.query(
      value === null ? 'ALTER SYSTEM RESET log_statement' : `ALTER SYSTEM SET log_statement = '${value}'`,
    );
    await admin.query('SELECT pg_reload_conf()');
    // Idle backends reread the configuration when signalled, before their next statement.
    await sleep(300);
  };

  return {
    description: `PostgreSQL ${version}${counting ? '' : ' (without pg_stat_statements: no round trips counted)'}${postmaster === null ? ' (a server elsewhere: no server CPU)' : ''}`,
    async database() {
      const url = await freshDatabase(cluster.url);
      const name = new URL(url).pathname.slice(1);
      const statements = async (): Promise<StatementStats[]> => {
        if (!counting) return [];
        const { rows } = await admin.query<StatementStats>(
          `SELECT query, calls::float8 AS calls, total_exec_time AS total_ms FROM pg_stat_statements
            WHERE dbid = (SELECT oid FROM pg_database WHERE datname = $1) ORDER BY total_exec_time DESC`,
          [name],
        );
        return rows;
      };
      return {
        url,
        resetStatements: async () => void (counting && (await admin.query('SELECT pg_stat_statements_reset()'))),
        statementCalls: async () => (counting ? (await statements()).reduce((n, s) => n + s.calls, 0) : null),
        statements,
        clusterCpuMicros,
        watch() {
          const seen: Record<string, number> = {};
          let sampling = Promise.resolve();
          const timer = setInterval(() => {
            sampling = sampling
              .then(async () => {
                // A backend between two statements of a unit is "idle in transaction": it waits for the gateway.
                const { rows } = await admin.query<{ what: string; n: number }>(
                  `SELECT CASE WHEN state = 'idle' THEN 'idle in the pool'
                               WHEN state LIKE 'idle in transaction%' THEN 'in a unit, waiting for the gateway'
                               WHEN wait_event IS NULL THEN 'running'
                               ELSE wait_event_type || ':' || wait_event END AS what, count(*)::int AS n
                     FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend' GROUP BY 1`,
                  [name],
                );
                for (const r of rows) seen[r.what] = (seen[r.what] ?? 0) + r.n;
              })
              .catch(() => {});
          }, WATCH_INTERVAL_MS);
          return {
            async stop() {
              clearInterval(timer);
              await sampling;
              return seen;
            },
          };
        },
        async trace(work) {
          if (!cluster.local) return null;
          const from = statSync(cluster.local.logFile).size;
          await setLogging('all');
          try {
            await work();
          } finally {
            await setLogging(null);
          }
          const logged = readFileSync(cluster.local.logFile).subarray(from).toString('utf8');
          return parseLog(logged).filter((s) => s.backend !== adminBackend);
        },
      };
    },
    async stop() {
      await admin.end().catch(() => {});
      await cluster.stop();
    },
  };
}

/** The statements of a server log (default log_line_prefix '%m [%p] '), a statement's further lines joined. */
export function parseLog(text: string): LoggedStatement[] {
  const out: LoggedStatement[] = [];
  let current: { backend: number; level: string; message: string } | null = null;
  const flush = () => {
    if (current?.level !== 'LOG') return;
    const m = /^(?:statement|execute ([^:]+)): ([\s\S]*)$/.exec(current.message);
    if (m)
      out.push({
        backend: current.backend,
        name: m[1] && m[1] !== '<unnamed>' ? m[1] : null,
        sql: m[2]!.replace(/\s+/g, ' ').trim(),
      });
  };
  for (const line of text.split('\n')) {
    const head = /^\d{4}-\d\d-\d\d \S+ \S+ \[(\d+)\] (\w+):\s+(.*)$/.exec(line);
    if (head) {
      flush();
      current = { backend: Number(head[1]), level: head[2]!, message: head[3]! };
    } else if (current) {
      current.message += `\n${line}`;
    }
  }
  flush();
  return out;
}
