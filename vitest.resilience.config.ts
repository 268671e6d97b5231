import { defineConfig } from 'vitest/config';

// `npm run test:resilience`: the resilience suites at full size (50 kills over 10,000 submissions,
// thousands of property runs), one file at a time so the crash and fault runs have the machine. The
// responses of its test gateways are checked against the OpenAPI document as in every run, and what
// a test starts is killed when it ends (test/support/owned.ts).
export default defineConfig({
  test: {
    include: ['test/resilience/**/*.test.ts'],
    globalSetup: [
      './test/support/temp-setup.ts',
      './test/support/build-setup.ts',
      './test/support/contract-setup.ts',
      './test/support/postgres-setup.ts',
    ],
    setupFiles: ['./test/support/owned-setup.ts'],
    env: { RESILIENCE: 'full' },
    pool: 'forks',
    maxWorkers: 1,
    testTimeout: 1_800_000,
    hookTimeout: 60_000,
  },
});
