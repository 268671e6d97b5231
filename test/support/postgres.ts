// A throwaway PostgreSQL cluster for the tests: TEST_DATABASE_URL if set, else the machine's own
// binaries (initdb, pg_ctl) in a temp folder on a free port, stopped and removed when done, and
// owned like a process (owned.ts): stopped at once when the test or file that started it ends.
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { ownCluster, runOwned } from './owned.js';

export interface TestPostgres {
  /** A connection string to a fresh database of the cluster. */
  url: string;
  /** The server's data folder and log file, when the cluster was started here (not TEST_DATABASE_URL). */
  local?: { dataDir: string; logFile: string };
  stop(): Promise<void>;
  /**
   * The server itself, to take it away under a running gateway and bring it back on the same port and
   * data; null when the cluster is not this run's own (TEST_DATABASE_URL).
   */
  server: ServerControl | null;
}

/** Asynchronous, so a test's clients keep running while the server goes down and comes back. */
export interface ServerControl {
  /** `pg_ctl stop -m fast`: open connections are terminated, the call returns once the server is down. */
  down(): Promise<void>;
  /** `pg_ctl start`, with the options of the first start; returns once it accepts connections. */
  up(): Promise<void>;
  /** `pg_ctl restart -m fast`. */
  restart(): Promise<void>;
}

export interface StartOptions {
  /** Server settings on top of the defaults, given as `-c name=value` (e.g. shared_preload_libraries for the bench); ignored with TEST_DATABASE_URL. */
  settings?: Record<string, string>;
}

/** Why a cluster could not be had (the test then says it skipped, in one line), or null. */
export type Unavailable = { reason: string };

/** The folder of initdb and pg_ctl: on PATH, or the newest /usr/lib/postgresql/<version>/bin (Debian). */
export function postgresBinaries(): string | null {
  const onPath = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' }).stdout.trim();
  if (onPath) return onPath.slice(0, -'/initdb'.length);
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], 'bin') : null;
}

/** A TCP port free on 127.0.0.1 now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts a cluster, or says why not. As root the server runs as the `postgres` account (PostgreSQL
 * refuses to run as root), in a folder that account owns. Durability stays at its defaults (fsync,
 * synchronous_commit on): the store promises a 2xx only after a durable commit.
 */
/** Why no cluster can be had here, or null when one can (TEST_DATABASE_URL, or the binaries). */
export function postgresUnavailable(): string | null {
  if (process.env.TEST_DATABASE_URL || postgresBinaries() !== null) return null;
  return 'no PostgreSQL server binaries (apt-get install postgresql, or set TEST_DATABASE_URL)';
}

export async function startPostgres(options: StartOptions = {}): Promise<TestPostgres | Unavailable> {
  if (process.env.TEST_DATABASE_URL) return { url: process.env.TEST_DATABASE_URL, stop: async () => {}, server: null };
  const bin = postgresBinaries();
  if (bin === null) return { reason: postgresUnavailable()! };
  const asRoot = userInfo().uid === 0;
  const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-pg-'));
  const command = (cmd: string, args: string[]): [string, string[]] =>
    asRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
  const run = (cmd: string, args: string[]) => execFileSync(...command(cmd, args), { stdio: 'pipe', encoding: 'utf8' });
  if (asRoot)
    chownSync(
      dir,
      Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })),
      Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })),
    );
  const data = join(dir, 'data');
  const logFile = join(dir, 'server.log');
  const owned = ownCluster(dir, data);
  const port = await freePort();
  const extra = Object.entries(options.settings ?? {})
    .map(([name, value]) => ` -c ${name}=${value}`)
    .join('');
  run(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
  const startArgs = [
    '-D',
    data,
    '-l',
    logFile,
    '-w',
    '-o',
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=300${extra}`,
    'start',
  ];
  run(join(bin, 'pg_ctl'), startArgs);
  const pgCtl = async (args: string[]) => {
    const [cmd, argv] = command(join(bin, 'pg_ctl'), args);
    const run = await runOwned(cmd, argv, { timeoutMs: 60_000 });
    if (run.code !== 0) throw new Error(`pg_ctl ${args.at(-1)} failed (${run.code ?? run.signal}): ${run.stderr}`);
  };
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    local: { dataDir: data, logFile },
    server: {
      down: () => pgCtl(['-D', data, '-m', 'fast', '-w', 'stop']),
      up: () => pgCtl(startArgs),
      restart: () => pgCtl(['-D', data, '-l', logFile, '-m', 'fast', '-w', 'restart']),
    },
    async stop() {
      try {
        // Without blocking the event loop: a process stopping on a signal must still answer the next one.
        await pgCtl(['-D', data, '-m', 'fast', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
        owned.release();
      }
    },
  };
}

let databases = 0;

/** A new, empty database on the cluster of `url`; answers its connection string. */
export async function freshDatabase(url: string): Promise<string> {
  const name = `t_${process.pid}_${++databases}_${Date.now().toString(36)}`;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const fresh = new URL(url);
  fresh.pathname = `/${name}`;
  return fresh.toString();
}

/**
 * The cluster for a test file, or why there is none: the file's tests then skip, and say so in one
 * line. CI installs PostgreSQL (.ci/run): there it must never be skipped.
 *
 * The run's shared cluster (postgres-setup.ts) unless `own` is set: a file makes its own databases on
 * it with `freshDatabase`, and must not change what the whole cluster sees (ALTER SYSTEM, roles'
 * settings, ending other databases' connections). `own: true` starts a cluster for the file alone,
 * for a test that stops, restarts or reconfigures the server (`server` is set only then).
 */
export async function clusterOrSkip(options: { own?: boolean } = {}): Promise<TestPostgres | null> {
  if (!options.own) {
    const { inject } = await import('vitest');
    const shared = inject('postgresUrl');
    if (shared) return { url: shared, stop: async () => {}, server: null };
  }
  const started = await startPostgres();
  if (!('reason' in started)) return started;
  if (process.env.CI) throw new Error(`PostgreSQL is required in CI: ${started.reason}`);
  console.log(`skipped: the PostgreSQL tests (${started.reason})`);
  return null;
}
