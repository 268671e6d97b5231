// vitest globalSetup, listed first: every temporary folder of a run (databases, rules, logs, clusters,
// browser profiles) of the workers, and of the processes they start with the environment they have,
// is made under one folder of the run, removed when every project has run. The workers inherit
// TMPDIR, which `os.tmpdir()` reads, so /tmp stays as it was without each test cleaning up. Before
// the folder goes, every process group and cluster a worker noted and did not end is killed
// (test/support/owned.ts): a worker killed outright runs no hook of its own.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OWNED_DIR_VARIABLE, sweepNoted } from './owned.js';

/**
 * Shared by every project's setup in this process. Which project's setup runs first depends on which
 * finds its files first, while teardowns run in the reverse order of the config: so the folder is
 * removed by whichever teardown is the last one, not by its maker's.
 */
interface RunFolder {
  dir: string;
  previous: string | undefined;
  previousOwned: string | undefined;
  users: number;
}
const KEY = Symbol.for('lead-gateway.test-run-folder');
const shared = globalThis as { [KEY]?: RunFolder };

export default function setup() {
  let folder = shared[KEY];
  if (folder === undefined) {
    const previous = process.env.TMPDIR;
    const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-test-run-'));
    // Traversable by others: run as root, the tests start PostgreSQL as the postgres user in a folder below.
    chmodSync(dir, 0o711);
    process.env.TMPDIR = dir;
    const previousOwned = process.env[OWNED_DIR_VARIABLE];
    process.env[OWNED_DIR_VARIABLE] = join(dir, 'owned');
    folder = shared[KEY] = { dir, previous, previousOwned, users: 0 };
  }
  folder.users += 1;
  const used = folder;
  // Within a project teardowns run in reverse order, so this one runs after its project's others.
  return () => {
    used.users -= 1;
    if (used.users > 0) return;
    delete shared[KEY];
    const left = sweepNoted(join(used.dir, 'owned'));
    if (left.groups + left.clusters > 0)
      console.warn(`killed what the tests left running: ${left.groups} process group(s), ${left.clusters} cluster(s)`);
    if (used.previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = used.previous;
    if (used.previousOwned === undefined) delete process.env[OWNED_DIR_VARIABLE];
    else process.env[OWNED_DIR_VARIABLE] = used.previousOwned;
    rmSync(used.dir, { recursive: true, force: true, maxRetries: 3 });
  };
}
