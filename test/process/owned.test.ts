// What a test starts does not outlive it (test/support/owned.ts): a vitest run in a child process runs
// fixtures that leave a process group and a PostgreSQL cluster behind on purpose (a test timing out,
// a test failing, a worker killed outright, a file's beforeAll in a worker that goes on to the next
// file, as npm test's workers do), and nothing of theirs is left once that run is over.
import { chmodSync, existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/child-gateway.js';
import { runOwned } from '../support/owned.js';
import { postgresUnavailable } from '../support/postgres.js';

/** True while the process exists (signal 0 checks without sending anything). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    expect((error as NodeJS.ErrnoException).code).toBe('ESRCH');
    return false;
  }
}

/**
 * True once the process is gone. A process killed after its parent died is reaped by init, a moment
 * after the signal: until then signal 0 still finds it, so this waits for that, up to 10 s.
 */
async function gone(pid: number): Promise<boolean> {
  for (const end = Date.now() + 10_000; Date.now() < end; await new Promise((r) => setTimeout(r, 20)))
    if (!alive(pid)) return true;
  return false;
}

describe('a test run', () => {
  it(
    'kills the process group of a test that timed out, the cluster of a test that failed, and the group of a worker killed outright',
    { timeout: 120_000 },
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-owned-'));
      // Traversable by the postgres account, which the cluster runs as when the tests run as root.
      chmodSync(dir, 0o711);
      const reportFile = join(dir, 'report.jsonl');
      const run = await runOwned(
        process.execPath,
        [
          join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'),
          'run',
          '--config',
          'test/fixtures/owned/vitest.config.ts',
          '--reporter=default',
          '--reporter=json',
          `--outputFile.json=${join(dir, 'results.json')}`,
        ],
        // A run of its own: no variable of this one's workers, and a cluster of its own (its folder
        // right under this run's, as a socket's path must stay under 108 bytes).
        {
          cwd: ROOT,
          env: {
            PATH: process.env.PATH ?? '/usr/bin:/bin',
            HOME: process.env.HOME ?? dir,
            TMPDIR: tmpdir(),
            NO_COLOR: '1',
            OWNED_FIXTURE_REPORT: reportFile,
          },
          timeoutMs: 100_000,
        },
      );
      const facts = readFileSync(reportFile, 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      const fact = <T>(key: string) => facts.find((f) => key in f)?.[key] as T | undefined;
      const results = JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8')) as {
        testResults: {
          name: string;
          assertionResults: { title: string; status: string; failureMessages: string[] }[];
        }[];
      };
      const byTitle = new Map(
        results.testResults.flatMap((file) => file.assertionResults.map((t) => [t.title, t] as const)),
      );

      // The fixtures failed as meant: one timed out, one threw, one worker died.
      expect(run.code, run.stdout + run.stderr).not.toBe(0);
      expect(byTitle.get('starts a shell that leaves a sleep behind, then hangs past its timeout')?.status).toBe(
        'failed',
      );
      expect(run.stdout + run.stderr).toMatch(/hangs past its timeout[\s\S]*Test timed out in 500ms/);
      const cluster = fact<string>('cluster');
      if (postgresUnavailable() === null) {
        expect(byTitle.get('starts a PostgreSQL cluster, then fails')?.failureMessages.join('\n')).toContain(
          'failing on purpose with the cluster running',
        );
        expect(cluster).toBeDefined();
      }

      // Gone at each test's end, before the file ended (not only at the run's end).
      expect(fact('afterTests')).toEqual({ group: false, sleeper: false, cluster: false });
      // What a file started in its beforeAll is gone before the next file runs in the same worker.
      expect(fact('afterFile')).toEqual({ worker: fact<number>('worker'), group: false });
      // And gone now: the shell, the sleep it left, the cluster's folder, the killed worker's sleep.
      const shell = fact<number>('shell')!;
      const sleeper = fact<number>('sleeper')!;
      expect(await gone(shell)).toBe(true);
      expect(await gone(sleeper)).toBe(true);
      if (cluster !== undefined) expect(existsSync(cluster)).toBe(false);
      const orphan = fact<number>('orphan');
      expect(orphan).toBeGreaterThan(0);
      expect(await gone(orphan!)).toBe(true);
      expect(run.stdout + run.stderr).toContain('killed what the tests left running: 1 process group(s), 0 cluster(s)');
    },
  );
});
