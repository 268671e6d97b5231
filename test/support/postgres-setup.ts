// vitest globalSetup of every project: one throwaway cluster for the whole run (or TEST_DATABASE_URL),
// shared by the projects of one run. Each test gateway makes its own database on it
// (test/support/store.ts), as does each file of the store tests (clusterOrSkip in postgres.ts). Where
// no cluster can be had, nothing is provided and those tests skip, saying so in one line.
import type { TestProject } from 'vitest/node';
import { postgresUnavailable, startPostgres, type TestPostgres } from './postgres.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A connection string to the run's PostgreSQL cluster (its `postgres` database), or '' without one. */
    postgresUrl: string;
  }
}

/** The run's cluster, started by the first project's setup and stopped by the last one's teardown. */
interface Shared {
  started: Promise<TestPostgres | null>;
  users: number;
}
const KEY = Symbol.for('lead-gateway.test-run-postgres');
const shared = globalThis as { [KEY]?: Shared };

export default async function setup(project: TestProject) {
  let run = shared[KEY];
  if (run === undefined) {
    const unavailable = postgresUnavailable();
    const starting: Promise<TestPostgres | null> =
      unavailable !== null
        ? Promise.resolve(null)
        : startPostgres().then((started) => {
            // vitest.config.ts checked the binaries, so this is a real failure.
            if ('reason' in started)
              throw new Error(`the test run cannot start a PostgreSQL cluster: ${started.reason}`);
            return started;
          });
    run = shared[KEY] = { started: starting, users: 0 };
  }
  run.users += 1;
  const cluster = await run.started;
  project.provide('postgresUrl', cluster?.url ?? '');
  const used = run;
  return async () => {
    used.users -= 1;
    if (used.users > 0) return;
    delete shared[KEY];
    await cluster?.stop();
  };
}
