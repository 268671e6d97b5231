import { defineConfig } from 'vitest/config';
import { postgresUnavailable } from './test/support/postgres.js';

/**
 * Test files that touch no store of the gateway's own choosing, or test one engine by design; every
 * other file runs a second time with its gateways on PostgreSQL.
 */
const NOT_AGAIN_ON_POSTGRES = [
  // Both engines already, each file on its own throwaway cluster (test/support/engines.ts).
  // hot-reads.test.ts is not one: its gateways run on the project's engine, as most files' do.
  'test/store/*/**',
  'test/store/!(hot-reads).test.ts',
  'test/idempotency/known-events.test.ts',
  'test/http/nul-character.test.ts',
  // The shared rate limits on their own cluster, as the replicas of a PostgreSQL deployment.
  // Not the quota and the failed-auth budget, whose gateways run on the project's engine.
  'test/rate-limit/!(quota|auth-failures).test.ts',
  // The processes, the CLI and the documented commands on their SQLite default (DATABASE_PATH files).
  'test/process/**',
  'test/cli/**',
  'test/docs/**',
  'test/demo-start.test.ts',
  'test/rules/loader.test.ts',
  'test/resilience/abuse.test.ts',
  'test/resilience/crash.test.ts',
  'test/resilience/slow-clients.test.ts',
  'test/resilience/storage-faults.test.ts',
  // The OpenAPI document and the typed client are the same whatever the engine.
  'test/openapi.test.ts',
  // PostgreSQL itself stopped and started, or several gateway processes: a cluster of the file's own.
  'test/resilience/postgres-*.test.ts',
  // No store at all.
  'test/artefacts.test.ts',
  'test/compose.test.ts',
  'test/config.test.ts',
  'test/contract.test.ts',
  'test/http/serializer.test.ts',
  'test/answers/coerce.test.ts',
  'test/porting/redact.test.ts',
  'test/answers/unmapped-snippet.test.ts',
  'test/bench/load.test.ts',
  'test/bench/store-unit.test.ts',
  'test/bench/engines.test.ts',
  'test/idempotency/fingerprint.test.ts',
  'test/webhooks/signing.test.ts',
  'test/webhooks/backoff.test.ts',
  'test/webhooks/deliver.test.ts',
  'test/webhooks/url-safety.test.ts',
  'test/webhooks/docs-recipes.test.ts',
];

/**
 * Files that wait for the migration calendar's real minutes (a brownout window, a schedule's moment)
 * with several gateway processes: `npm run test:resilience` only (vitest.resilience.config.ts), not
 * the contributor's loop (docs/testing.md).
 */
const ONLY_IN_RESILIENCE = [
  'test/resilience/postgres-replicas-brownouts.test.ts',
  'test/resilience/postgres-replicas-schedule.test.ts',
  // A killed replica's claims wait for their lease (the attempt's timeout and a margin) to end.
  'test/resilience/postgres-replicas-webhooks.test.ts',
];

const shared = {
  // Real databases and real servers: keep files in separate workers, but not too many on 2 cores.
  pool: 'forks',
  maxWorkers: 2,
  testTimeout: 20_000,
  hookTimeout: 30_000,
} as const;

// CI installs PostgreSQL (.ci/run) and must never skip it; elsewhere its absence is said in one line.
const unavailable = postgresUnavailable();
if (unavailable !== null && process.env.CI) throw new Error(`PostgreSQL is required in CI: ${unavailable}`);
// eslint-disable-next-line no-console -- the one line that says the PostgreSQL half did not run
if (unavailable !== null) console.log(`skipped: the tests on PostgreSQL (${unavailable})`);

/**
 * Two projects (docs/testing.md): `sqlite` is every file, with the store tests on both engines
 * (`npm test`); `postgres` is every file not listed above again, its gateways on PostgreSQL
 * (`npm run test:postgres`). `npx vitest run <file>` runs a file in both.
 */
export default defineConfig({
  test: {
    ...shared,
    // Every response of a test gateway is checked against the OpenAPI document once all files ran.
    // One PostgreSQL cluster serves the whole run, both projects (postgres-setup.ts).
    globalSetup: [
      './test/support/temp-setup.ts',
      './test/support/build-setup.ts',
      './test/support/contract-setup.ts',
      './test/support/postgres-setup.ts',
    ],
    // What a test starts is killed when it ends, whatever its outcome (owned.ts).
    setupFiles: ['./test/support/owned-setup.ts'],
    // `npm run test:postgres` without PostgreSQL selects no file, and that is not a failure there.
    passWithNoTests: unavailable !== null,
    projects: [
      {
        extends: true,
        test: {
          name: 'sqlite',
          include: ['test/**/*.test.ts'],
          exclude: ONLY_IN_RESILIENCE,
          // A worker runs its files one after the other in one module cache instead of loading fastify,
          // zod and the app again for each: about 0.8 s of CPU a file (docs/testing.md). Setup files
          // still run for every file, and vitest restores mocks between files.
          isolate: false,
        },
      },
      {
        extends: true as const,
        test: {
          name: 'postgres',
          // Without PostgreSQL the project has no files, and says why in the line above.
          include: unavailable === null ? ['test/**/*.test.ts'] : [],
          exclude: NOT_AGAIN_ON_POSTGRES,
          env: { TEST_STORE_ENGINE: 'postgres' },
        },
      },
    ],
  },
});
