// A throwaway PostgreSQL cluster for the tests: TEST_DATABASE_URL if set, else the machine's own
// binaries (initdb, pg_ctl) in a temp folder on a free port, stopped and removed when done.
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

export interface TestPostgres {
  /** A connection string to a fresh database of the cluster. */
  url: string;
  stop(): Promise<void>;
}

/** Why a cluster could not be had (the test then says it skipped, in one line), or null. */
export type Unavailable = { reason: string };

/** The folder of initdb and pg_ctl: on PATH, or the newest /usr/lib/postgresql/<version>/bin (Debian). */
function binaries(): string | null {
  const onPath = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' }).stdout.trim();
  if (onPath) return onPath.slice(0, -'/initdb'.length);
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], 'bin') : null;
}

function freePort(): Promise<number> {
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
export async function startPostgres(): Promise<TestPostgres | Unavailable> {
  if (process.env.TEST_DATABASE_URL) return { url: process.env.TEST_DATABASE_URL, stop: async () => {} };
  const bin = binaries();
  if (bin === null) return { reason: 'no PostgreSQL server binaries (apt-get install postgresql, or set TEST_DATABASE_URL)' };
  const asRoot = userInfo().uid === 0;
  const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-pg-'));
  const run = (cmd: string, args: string[]) =>
    execFileSync(asRoot ? 'runuser' : cmd, asRoot ? ['-u', 'postgres', '--', cmd, ...args] : args, { stdio: 'pipe', encoding: 'utf8' });
  if (asRoot) chownSync(dir, Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })), Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })));
  const data = join(dir, 'data');
  const port = await freePort();
  run(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
  run(join(bin, 'pg_ctl'), ['-D', data, '-l', join(dir, 'server.log'), '-w', '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`, 'start']);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async stop() {
      try {
        run(join(bin, 'pg_ctl'), ['-D', data, '-m', 'fast', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
