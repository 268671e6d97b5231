// vitest globalSetup of the PostgreSQL project: one throwaway cluster for the whole run (or
// TEST_DATABASE_URL); each test gateway makes its own database on it (test/support/store.ts).
import type { TestProject } from 'vitest/node';
import { startPostgres } from './postgres.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A connection string to the suite's PostgreSQL cluster (its `postgres` database). */
    postgresUrl: string;
  }
}

export default async function setup(project: TestProject) {
  const started = await startPostgres();
  // vitest.config.ts adds this project only where a cluster can be had, so this is a real failure.
  if ('reason' in started) throw new Error(`the PostgreSQL test project cannot start a cluster: ${started.reason}`);
  project.provide('postgresUrl', started.url);
  return () => started.stop();
}
