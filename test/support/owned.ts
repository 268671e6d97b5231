// Every process a test starts is owned: it runs in a process group of its own, and that whole group
// (the process and whatever it started: npm's gateway, a shell's `sleep`, strace's tracee) is killed
// when the test that started it ends, passes, fails or times out; when the file ends, for processes
// started outside a test (beforeAll); and when the worker exits. Throwaway PostgreSQL clusters are
// owned the same way (test/support/postgres.ts). A worker that dies too hard to run any of that
// leaves a note per process group and cluster in the run's folder, which the run's last teardown
// (test/support/temp-setup.ts) reads to kill what is still there. docs/testing.md says more.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Set by temp-setup.ts for the workers: the folder of the notes on live process groups and clusters. */
export const OWNED_DIR_VARIABLE = 'LEAD_GATEWAY_TEST_OWNED_DIR';

/** How long a group has after SIGTERM before SIGKILL. */
const GRACE_MS = 2_000;

interface Owner {
  groups: Set<number>;
  clusters: Set<string>;
}

/** What the current (non-concurrent) test started; null outside a test. Set by owned-setup.ts. */
let testOwner: Owner | null = null;
/** What was started outside a test, or in a concurrent one: ended with the file. */
const fileOwner: Owner = { groups: new Set(), clusters: new Set() };
/** Every live group and cluster of this worker, whoever owns it: ended at the worker's exit. */
const allGroups = new Set<number>();
const allClusters = new Map<string, string>();

const noteDir = (): string | null => process.env[OWNED_DIR_VARIABLE] ?? null;

function note(name: string, text: string): void {
  const dir = noteDir();
  if (dir === null) return;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, name), text);
}

function unnote(name: string): void {
  const dir = noteDir();
  if (dir !== null) rmSync(join(dir, name), { force: true });
}

const owner = (): Owner => testOwner ?? fileOwner;

/** A process's start time in clock ticks since boot (/proc/<pid>/stat, field 22); null when it is gone. */
function startTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: count from after it.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/** True while any process of group `pgid` exists. */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // Gone already.
  }
}

/**
 * `spawn`, in a process group of its own, owned by the current test (or the file, outside a test).
 * The group is killed when its owner ends even if the process itself exited and left children.
 */
export function spawnOwned(command: string, args: readonly string[], options: SpawnOptions = {}): ChildProcess {
  const child = spawn(command, args, { ...options, detached: true });
  // An unstarted command has no pid; its 'error' event says why, to whoever listens.
  if (child.pid === undefined) return child;
  const pgid = child.pid;
  allGroups.add(pgid);
  owner().groups.add(pgid);
  note(`group-${pgid}`, `${pgid}\n${startTime(pgid) ?? ''}\n`);
  return child;
}

/** The result of `runOwned`: what `execFile` gives, without throwing on a non-zero exit. */
export interface OwnedRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command to its end with `spawnOwned`, collecting its output; `timeoutMs` kills its group.
 * Resolves whatever the exit code; rejects only when the command could not start.
 */
export function runOwned(
  command: string,
  args: readonly string[],
  options: SpawnOptions & { timeoutMs?: number; input?: string } = {},
): Promise<OwnedRun> {
  const { timeoutMs, input, ...spawnOptions } = options;
  const child = spawnOwned(command, args, {
    ...spawnOptions,
    stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  if (input !== undefined) child.stdin!.end(input);
  return new Promise((resolve, reject) => {
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => child.pid !== undefined && signalGroup(child.pid, 'SIGKILL'), timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/**
 * `promisify(execFile)` with `spawnOwned`: resolves the output of a command that exited 0, rejects
 * otherwise with an error carrying `code`, `signal`, `stdout` and `stderr`; `timeout` kills its group.
 */
export async function execOwned(
  command: string,
  args: readonly string[],
  options: SpawnOptions & { timeout?: number; maxBuffer?: number } = {},
): Promise<{ stdout: string; stderr: string }> {
  const { timeout, maxBuffer: _maxBuffer, ...spawnOptions } = options;
  const run = await runOwned(command, args, {
    ...spawnOptions,
    ...(timeout === undefined ? {} : { timeoutMs: timeout }),
  });
  if (run.code === 0) return { stdout: run.stdout, stderr: run.stderr };
  throw Object.assign(
    new Error(`Command failed (${run.code ?? run.signal}): ${command} ${args.join(' ')}\n${run.stderr}`),
    run,
  );
}

/** SIGTERM to the group, then SIGKILL to what is left after the grace. */
async function endGroup(pgid: number): Promise<void> {
  if (groupAlive(pgid)) {
    signalGroup(pgid, 'SIGTERM');
    for (const end = Date.now() + GRACE_MS; groupAlive(pgid) && Date.now() < end;)
      await new Promise((r) => setTimeout(r, 20));
    if (groupAlive(pgid)) signalGroup(pgid, 'SIGKILL');
  }
  allGroups.delete(pgid);
  unnote(`group-${pgid}`);
}

/**
 * A cluster started in `folder` (its data folder `dataDir` inside), owned like a process: stopped at
 * once (SIGQUIT to its postmaster, what `pg_ctl stop -m immediate` sends) and the folder removed
 * when its owner ends, unless `release` said it was stopped and removed before.
 */
export function ownCluster(folder: string, dataDir: string): { release(): void } {
  const key = folder;
  const mine = owner();
  allClusters.set(key, dataDir);
  mine.clusters.add(key);
  note(`cluster-${key.replaceAll('/', '_')}`, `${folder}\n${dataDir}\n`);
  return {
    release() {
      allClusters.delete(key);
      mine.clusters.delete(key);
      unnote(`cluster-${key.replaceAll('/', '_')}`);
    },
  };
}

/** The postmaster's pid from its data folder, or null when it is not running there. */
function postmasterPid(dataDir: string): number | null {
  try {
    const pid = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const pause = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * Stops a cluster immediately and removes its folder, synchronously (an exit hook may call it): the
 * postmaster gets SIGQUIT (immediate shutdown: it ends its backends and exits without a checkpoint),
 * SIGKILL if it is still there after 5 s.
 */
export function killClusterNow(folder: string, dataDir: string): void {
  const pid = postmasterPid(dataDir);
  if (pid !== null && alive(pid)) {
    try {
      process.kill(pid, 'SIGQUIT');
    } catch {
      // Gone already.
    }
    for (let waited = 0; alive(pid) && waited < 5_000; waited += 20) pause(20);
    if (alive(pid)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
    }
  }
  rmSync(folder, { recursive: true, force: true, maxRetries: 3 });
}

async function end(what: Owner): Promise<void> {
  const groups = [...what.groups];
  what.groups.clear();
  const clusters = [...what.clusters];
  what.clusters.clear();
  await Promise.all(groups.map(endGroup));
  for (const key of clusters) {
    const dataDir = allClusters.get(key);
    if (dataDir === undefined) continue;
    killClusterNow(key, dataDir);
    allClusters.delete(key);
    unnote(`cluster-${key.replaceAll('/', '_')}`);
  }
}

/** Called by owned-setup.ts around each test. */
export const ownedHooks = {
  testStarts(concurrent: boolean): void {
    testOwner = concurrent ? null : { groups: new Set(), clusters: new Set() };
  },
  async testEnds(): Promise<void> {
    const ending = testOwner;
    testOwner = null;
    if (ending) await end(ending);
  },
  fileEnds: () => end(fileOwner),
};

// The last resort inside the process (a vitest worker, or a bench script): whatever is still owned
// when it exits is killed without grace. A signal that ends the process runs no 'exit' listener,
// so the usual ending signals do the same first, then end the process as they would have, unless
// someone else listens to them (and then decides).
function killEverythingNow(): void {
  for (const pgid of allGroups) {
    signalGroup(pgid, 'SIGKILL');
    unnote(`group-${pgid}`);
  }
  allGroups.clear();
  for (const [folder, dataDir] of allClusters) killClusterNow(folder, dataDir);
  allClusters.clear();
}
process.on('exit', killEverythingNow);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => {
    killEverythingNow();
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  });
}

/**
 * The run's last teardown: kills every group and cluster a worker noted and did not end (a worker
 * killed outright runs no hook of its own). Answers what it found, for the teardown to say.
 */
export function sweepNoted(dir: string): { groups: number; clusters: number } {
  const found = { groups: 0, clusters: 0 };
  if (!existsSync(dir)) return found;
  for (const name of readdirSync(dir)) {
    const text = readFileSync(join(dir, name), 'utf8').split('\n');
    if (name.startsWith('group-')) {
      const pgid = Number(text[0]);
      // The leader's start time as noted: a group id the system has since given to another process
      // (ids are reused) is not ours to kill.
      const ours = text[1] === undefined || text[1] === '' || startTime(pgid) === text[1];
      if (Number.isInteger(pgid) && pgid > 0 && ours && groupAlive(pgid)) {
        signalGroup(pgid, 'SIGKILL');
        found.groups += 1;
      }
    } else if (name.startsWith('cluster-') && text[0] && text[1]) {
      if (existsSync(text[0])) found.clusters += 1;
      killClusterNow(text[0], text[1]);
    }
    unlinkSync(join(dir, name));
  }
  return found;
}
