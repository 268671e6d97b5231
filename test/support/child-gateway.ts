// The gateway as a real child process (crash, storage-fault and shutdown tests; the benchmarks),
// owned by the test that starts it: killed with its process group when that test ends (owned.ts).
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnOwned } from './owned.js';

export const ROOT = join(import.meta.dirname, '..', '..');
export const DEMO_V1_KEY = 'lgv1_demo-v1-key-not-for-production';
export const CHILD_ADMIN_TOKEN = 'child-admin-token-0123456789abcdef';

/** Set by build-setup.ts for the workers: the run's build of `src/`, compiled as `npm run build` does. */
export const BUILD_DIR_VARIABLE = 'LEAD_GATEWAY_TEST_BUILD';

function buildDir(): string {
  const dir = process.env[BUILD_DIR_VARIABLE];
  if (!dir)
    throw new Error(
      `${BUILD_DIR_VARIABLE} is not set: the run's build is made by test/support/build-setup.ts, a globalSetup of the vitest configs`,
    );
  return dir;
}

/** `node <this>` starts the gateway from the run's build, as `npm run serve` starts `dist/main.js`. */
export const builtMain = (): string => join(buildDir(), 'main.js');

/** `node <this> ...args` is the CLI from the run's build, as installed (`lead-gateway`, `dist/cli/main.js`). */
export const builtCli = (): string => join(buildDir(), 'cli', 'main.js');

export interface ChildGateway {
  address: string;
  /** The pid of the gateway itself (not of a wrapper such as strace). */
  pid: number;
  child: ChildProcess;
  exited: Promise<number | null>;
  /** Everything the process printed so far (stdout and stderr), when `capture` was set. */
  output(): string;
  /** Sends a signal and waits for the process (and its wrapper) to end. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface ChildOptions {
  /** Environment on top of a minimal default (loopback, port 0, the example rules). */
  env: Record<string, string>;
  /**
   * `build` (the default) runs the test run's build (build-setup.ts); `src` runs the TypeScript
   * through tsx, as `npm run dev` does; `dist` runs `npm run build`'s output (benchmarks).
   */
  entry?: 'build' | 'src' | 'dist';
  /** Another build's `dist/main.js` instead (a benchmark comparing two builds); wins over `entry`. */
  main?: string;
  /** Options for node itself, e.g. --cpu-prof. */
  nodeArgs?: string[];
  /** A command the gateway runs under, e.g. strace with fault injection. */
  wrapper?: string[];
  /** Keep the output in memory (tests); otherwise it is read and dropped. */
  capture?: boolean;
  startTimeoutMs?: number;
}

/** Starts the gateway and resolves once its "listening" log line names the address. */
export async function spawnGateway(options: ChildOptions): Promise<ChildGateway> {
  const entry = options.main
    ? [options.main]
    : options.entry === 'dist'
      ? ['dist/main.js']
      : options.entry === 'src'
        ? ['--import', 'tsx', 'src/main.ts']
        : [builtMain()];
  const argv = [...(options.wrapper ?? []), process.execPath, ...(options.nodeArgs ?? []), ...entry];
  const child = spawnOwned(argv[0]!, argv.slice(1), {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/tmp',
      HOST: '127.0.0.1',
      PORT: '0',
      RULES_DIR: join(ROOT, 'rules'),
      ADMIN_TOKEN: CHILD_ADMIN_TOKEN,
      LOG_LEVEL: 'info',
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code, signal) => resolve(code ?? (signal ? -1 : null))),
  );
  let out = '';
  let seen = '';
  let listening = false;
  const address = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`gateway did not start in time:\n${out || seen}`)),
      options.startTimeoutMs ?? 30_000,
    );
    const onData = (chunk: Buffer) => {
      const text = chunk.toString();
      if (options.capture) out += text;
      if (!listening) {
        seen += text;
        const m = /"address":"(http:\/\/[^"]+)".*"msg":"lead-gateway listening"/.exec(seen);
        if (m) {
          clearTimeout(timer);
          listening = true;
          seen = '';
          resolve(m[1]!);
        }
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`gateway exited with ${code} before listening:\n${out || seen}`));
    });
  });
  const pid = options.wrapper ? gatewayPid(child.pid!) : child.pid!;
  return {
    address,
    pid,
    child,
    exited,
    output: () => out,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) {
        if (pid !== child.pid) process.kill(pid, signal);
        child.kill(signal);
      }
      return exited;
    },
  };
}

/** The node process under a wrapper: the wrapper's first child. */
function gatewayPid(wrapperPid: number): number {
  const children = readFileSync(`/proc/${wrapperPid}/task/${wrapperPid}/children`, 'utf8').trim().split(/\s+/);
  const pid = Number(children[0]);
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`no child of ${wrapperPid}`);
  return pid;
}

/** Resident memory of a process now and at its peak, in bytes (Linux /proc). */
export function memoryOf(pid: number): { rss: number; peak: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
    return { rss: kb('VmRSS'), peak: kb('VmHWM') };
  } catch {
    return null;
  }
}

/** A POST with a JSON body; resolves to the status and parsed body, or rejects on a network error. */
export async function postJson<T = Record<string, unknown>>(
  url: string,
  headers: Record<string, string>,
  body: unknown,
): Promise<{ status: number; body: T; retryAfter: string | null }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return {
    status: res.status,
    body: (text ? JSON.parse(text) : null) as T,
    retryAfter: res.headers.get('retry-after'),
  };
}
