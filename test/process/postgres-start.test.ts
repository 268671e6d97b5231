// The gateway and the CLI on PostgreSQL, as an operator runs them: DATABASE_URL selects the engine,
// the schema is migrated at start (or by `migrate`), and a database that cannot be used is one line.
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import {
  builtCli,
  builtMain,
  CHILD_ADMIN_TOKEN,
  type ChildGateway,
  DEMO_V1_KEY,
  ROOT,
  spawnGateway,
} from '../support/child-gateway.js';
import { clusterOrSkip, freshDatabase, type TestPostgres } from '../support/postgres.js';
import { EXAMPLE_RULES } from '../helper.js';
import { migrations } from '../../src/store/postgres/migrations.js';

let cluster: TestPostgres | null = null;
const gateways: ChildGateway[] = [];
beforeAll(async () => void (cluster = await clusterOrSkip()), 60_000);
afterAll(async () => {
  await Promise.all(gateways.map((g) => g.stop()));
  await cluster?.stop();
});

const LATEST = Math.max(...migrations.map((m) => m.version));

/** The URL with a password the server does not check (trust auth): what the log must never show. */
const withPassword = (url: string) => {
  const u = new URL(url);
  u.username = 'postgres';
  u.password = 'pw-never-logged';
  return u.toString();
};

const cli = (env: Record<string, string>, ...args: string[]) => {
  const run = spawnSync(process.execPath, [builtCli(), ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', RULES_DIR: EXAMPLE_RULES, ...env },
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { code: run.status, out: run.stdout, err: run.stderr };
};

describe('a gateway on PostgreSQL', () => {
  it('is selected by DATABASE_URL, migrates at start, stores leads there and logs the URL without its password', async (context) => {
    if (!cluster) return context.skip();
    const url = withPassword(await freshDatabase(cluster.url));
    const gw = await spawnGateway({
      env: { DATABASE_URL: url, DEMO_MODE: 'true', ADMIN_TOKEN: CHILD_ADMIN_TOKEN },
      capture: true,
    });
    gateways.push(gw);
    expect((await fetch(`${gw.address}/readyz`)).status).toBe(200);
    const res = await fetch(`${gw.address}/api/integrations/v1/leads/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${DEMO_V1_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ event_id: 'pg-start-1', external_contact_id: 'telegram:1', first_name: 'Aziza' }),
    });
    expect(res.status).toBe(201);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      expect((await client.query('SELECT first_name FROM leads')).rows).toEqual([{ first_name: 'Aziza' }]);
      expect((await client.query('SELECT max(version) AS v FROM schema_migrations')).rows[0].v).toBe(LATEST);
    } finally {
      await client.end();
    }
    const listening = gw
      .output()
      .split('\n')
      .find((l) => l.includes('lead-gateway listening'))!;
    expect(JSON.parse(listening)).toMatchObject({
      engine: 'postgres',
      database: url.replace('pw-never-logged', '***'),
    });
    expect(gw.output()).not.toContain('pw-never-logged');
  });

  it('starts on a database that takes no writes, and says so on /readyz instead of serving', async (context) => {
    if (!cluster) return context.skip();
    const url = await freshDatabase(cluster.url);
    const first = await spawnGateway({ env: { DATABASE_URL: url } });
    await first.stop();
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`ALTER DATABASE ${new URL(url).pathname.slice(1)} SET default_transaction_read_only = on`);
    await admin.end();
    const gw = await spawnGateway({ env: { DATABASE_URL: url }, capture: true });
    gateways.push(gw);
    const ready = await fetch(`${gw.address}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ code: 'service-unavailable', reason: 'read-only' });
  });

  it('refuses to start on an unreachable server, in one line naming DATABASE_URL without the password', async (context) => {
    if (!cluster) return context.skip();
    const url = new URL(withPassword(cluster.url));
    url.port = '1';
    const run = spawnSync(process.execPath, [builtMain(), '--demo'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        PORT: '0',
        RULES_DIR: EXAMPLE_RULES,
        DATABASE_URL: url.toString(),
      },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(run.status).toBe(1);
    const lines = run.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^DATABASE_URL: cannot open the database postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:1\/postgres: .*ECONNREFUSED/,
    );
  });
});

describe('the CLI on PostgreSQL', () => {
  it('migrate brings a new database to the latest schema, then finds it up to date; other commands work there too', async (context) => {
    if (!cluster) return context.skip();
    const env = { DATABASE_URL: await freshDatabase(cluster.url) };
    const first = cli(env, 'migrate');
    expect(first.code).toBe(0);
    expect(first.out.trim()).toBe(
      `Applied migration(s) ${migrations.map((m) => m.version).join(', ')}; the schema is at version ${LATEST}.`,
    );
    expect(first.err).toContain(`database: ${env.DATABASE_URL}`);
    const again = cli(env, 'migrate', '--json');
    expect(JSON.parse(again.out)).toEqual({ engine: 'postgres', version: LATEST, applied: [] });
    const issued = cli(env, 'issue-key', 'brightpath:telegram-bot', '--json');
    expect(issued.code).toBe(0);
    expect(JSON.parse(issued.out).key).toMatch(/^lgv1_/);
  });

  it('refuses --database beside --database-url, both variables at once, and --create on PostgreSQL: two databases are never a guess', async (context) => {
    if (!cluster) return context.skip();
    const run = cli({}, '--database', 'x.db', '--database-url', cluster.url, 'migrate');
    expect(run.code).toBe(2);
    expect(run.err.trim()).toBe('error: --database and --database-url name two databases: give one');
    const withPassword = cli({}, '--database-url', 'postgres://gw:s3cret@127.0.0.1:1/gw', 'migrate');
    expect(withPassword.code).toBe(2);
    expect(withPassword.err.trim()).toMatch(/^error: --database-url holds a password, which would show in ps/);
    expect(withPassword.err).not.toContain('s3cret');
    const both = cli({ DATABASE_URL: cluster.url, DATABASE_PATH: 'x.db' }, 'migrate');
    expect(both.code).toBe(2);
    expect(both.err.trim()).toMatch(/^error: DATABASE_URL and DATABASE_PATH are both set/);
    const create = cli({ DATABASE_URL: cluster.url }, '--create', 'migrate');
    expect(create.code).toBe(2);
    expect(create.err.trim()).toBe(
      'error: --create makes a SQLite file; a PostgreSQL database is created by its operator (createdb), and the CLI migrates it',
    );
  });
});
