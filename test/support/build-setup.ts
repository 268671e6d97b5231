// vitest globalSetup: the gateway and the CLI compiled once per run, as `npm run build` compiles them,
// into a folder of the run beside `dist/` (`.test-build-<pid>-<random>/`, git-ignored), removed at the
// end. Child gateways and the CLI tests start `node <folder>/main.js` and `<folder>/cli/main.js`: a
// process from compiled JavaScript costs less than half the CPU of one through tsx. Not `dist/`
// itself, which `npm start` (test/docs/npm-start.test.ts) rebuilds under the others. The folder sits
// at the repository's top so that what the code finds beside it (`../package.json`, `docs/`,
// `node_modules`) is where it is for `dist/`. In watch mode each rerun builds again, so that a change
// to `src/` reaches the child processes too. docs/testing.md says more.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { BUILD_DIR_VARIABLE, ROOT } from './child-gateway.js';

const PREFIX = '.test-build-';

/** Built by the first project's setup, removed by the last one's teardown (as temp-setup.ts does). */
interface Shared {
  dir: string;
  previous: string | undefined;
  users: number;
}
const KEY = Symbol.for('lead-gateway.test-run-build');
const shared = globalThis as { [KEY]?: Shared };

export default function setup(project: TestProject) {
  let run = shared[KEY];
  if (run === undefined) {
    removeLeftBuilds();
    const dir = mkdtempSync(join(ROOT, `${PREFIX}${process.pid}-`));
    build(dir);
    // Registered once: vitest calls it once per rerun, whichever projects rerun.
    project.onTestsRerun(() => build(dir));
    // The workers inherit it, as they inherit temp-setup.ts's TMPDIR.
    const previous = process.env[BUILD_DIR_VARIABLE];
    process.env[BUILD_DIR_VARIABLE] = dir;
    run = shared[KEY] = { dir, previous, users: 0 };
  }
  run.users += 1;
  const used = run;
  return () => {
    used.users -= 1;
    if (used.users > 0) return;
    delete shared[KEY];
    if (used.previous === undefined) delete process.env[BUILD_DIR_VARIABLE];
    else process.env[BUILD_DIR_VARIABLE] = used.previous;
    rmSync(used.dir, { recursive: true, force: true, maxRetries: 3 });
  };
}

/** `npm run build` into `dir`. */
function build(dir: string): void {
  // `--noCheck`: the same JavaScript as `npm run build` at a third of the CPU; the types are
  // checked by `npm run typecheck`, as CI does before the tests.
  execFileSync(
    process.execPath,
    [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json', '--noCheck', '--outDir', dir],
    {
      cwd: ROOT,
      stdio: ['ignore', 'inherit', 'inherit'],
      timeout: 120_000,
    },
  );
  for (const assets of ['views', 'static'])
    cpSync(join(ROOT, 'src', 'console', assets), join(dir, 'console', assets), { recursive: true });
}

/** The build of a run whose vitest was killed outright (its pid is in the name) has no teardown left. */
function removeLeftBuilds(): void {
  for (const name of readdirSync(ROOT)) {
    if (!name.startsWith(PREFIX)) continue;
    const pid = Number(name.slice(PREFIX.length).split('-')[0]);
    if (Number.isInteger(pid) && pid > 0 && !alive(pid)) rmSync(join(ROOT, name), { recursive: true, force: true });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
