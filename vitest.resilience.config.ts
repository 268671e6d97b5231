import { defineConfig } from 'vitest/config';

// `npm run test:resilience`: the resilience suites at full size (50 kills over 10,000 submissions,
// thousands of property runs), one file at a time so the crash and fault runs have the machine.
export default defineConfig({
  test: {
    include: ['test/resilience/**/*.test.ts'],
    globalSetup: ['./test/support/temp-setup.ts'],
    env: { RESILIENCE: 'full' },
    pool: 'forks',
    maxWorkers: 1,
    testTimeout: 1_800_000,
    hookTimeout: 60_000,
  },
});
