// vitest globalSetup, listed first: every temporary folder of a run (databases, rules, logs, clusters,
// browser profiles, of the workers and of the processes they start) is made under one folder of the
// run, removed when every file has run. The workers and their children inherit TMPDIR, which
// `os.tmpdir()` reads, so /tmp stays as it was without each test cleaning up after itself.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Set while a run's folder is in use: each project lists this setup, and one folder serves them all. */
const MARK = 'LEAD_GATEWAY_TEST_RUN_TMPDIR';

export default function setup() {
  if (process.env[MARK] !== undefined) return;
  const previous = process.env.TMPDIR;
  const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-test-run-'));
  // Traversable by others: run as root, the tests start PostgreSQL as the postgres user in a folder below.
  chmodSync(dir, 0o711);
  process.env.TMPDIR = dir;
  process.env[MARK] = dir;
  // Teardowns run in reverse order, so this one runs last: the clusters are stopped by then.
  return () => {
    delete process.env[MARK];
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  };
}
