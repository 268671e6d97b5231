import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Every response of a test gateway is checked against the OpenAPI document once all files ran.
    globalSetup: ['./test/support/contract-setup.ts'],
    // Real SQLite files and real servers: keep files in separate workers, but not too many on 2 cores.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 20_000,
    hookTimeout: 30_000,
  },
});
