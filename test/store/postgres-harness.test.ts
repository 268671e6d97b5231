// The PostgreSQL test harness: a throwaway cluster starts, takes a durable write, and is removed.
import { existsSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgres, type TestPostgres } from '../support/postgres.js';

let cluster: TestPostgres | null = null;
let skipped: string | null = null;

beforeAll(async () => {
  const started = await startPostgres({ settings: { work_mem: '7MB' } });
  if ('reason' in started) {
    // CI installs PostgreSQL (.ci/run): there it must never be skipped.
    if (process.env.CI) throw new Error(`PostgreSQL is required in CI: ${started.reason}`);
    skipped = started.reason;
    console.log(`skipped: the PostgreSQL tests (${started.reason})`);
  } else {
    cluster = started;
  }
}, 60_000);
afterAll(async () => cluster?.stop());

describe('a throwaway PostgreSQL cluster', () => {
  it('answers, commits durably, and is the server the tests expect', async (context) => {
    if (skipped !== null) return context.skip();
    const client = new pg.Client({ connectionString: cluster!.url });
    await client.connect();
    try {
      const settings = await client.query<{ name: string; setting: string }>(
        "SELECT name, setting FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit', 'server_version_num')",
      );
      const byName = Object.fromEntries(settings.rows.map((r) => [r.name, r.setting]));
      expect(byName).toMatchObject({ fsync: 'on', synchronous_commit: 'on' });
      expect(Number(byName.server_version_num)).toBeGreaterThanOrEqual(130000);
      await client.query('CREATE TABLE probe (id int PRIMARY KEY)');
      await client.query('INSERT INTO probe VALUES (1)');
      expect((await client.query('SELECT count(*)::int AS n FROM probe')).rows).toEqual([{ n: 1 }]);
    } finally {
      await client.end();
    }
  });

  it('starts with the settings it is given, and names its data folder and log file', async (context) => {
    // TEST_DATABASE_URL names a server started elsewhere: its settings are its own.
    if (skipped !== null || process.env.TEST_DATABASE_URL) return context.skip();
    expect(existsSync(cluster!.local!.logFile)).toBe(true);
    const client = new pg.Client({ connectionString: cluster!.url });
    await client.connect();
    try {
      expect((await client.query<{ work_mem: string }>('SHOW work_mem')).rows[0]!.work_mem).toBe('7MB');
      expect((await client.query<{ data_directory: string }>('SHOW data_directory')).rows[0]!.data_directory).toBe(
        cluster!.local!.dataDir,
      );
    } finally {
      await client.end();
    }
  });
});
