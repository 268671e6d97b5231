// `lead-gateway copy`: a SQLite file filled by a real gateway, copied into PostgreSQL, then served
// there: replays, matching and the migration report as on the file; every count equal; a second run
// changes nothing; refused while a gateway has the file open.
import { spawnSync } from 'node:child_process';
import { copyFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { ADMIN_TOKEN, EXAMPLE_RULES, startGateway, type Gateway } from '../helper.js';
import { clusterOrSkip, freshDatabase, type TestPostgres } from '../support/postgres.js';
import { buildApp } from '../../src/app.js';
import { openStore } from '../../src/store/open-store.js';
import { createRulesHolder } from '../../src/rules/loader.js';
import { createLogger } from '../../src/logging.js';
import { createAdminCredential } from '../../src/admin/credentials.js';
import { createConsoleUser } from '../../src/console/users.js';
import { COPIED_TABLES } from '../../src/store/copy.js';
import { checkSignIn } from '../../src/console/users.js';
import { TABLES } from '../support/inspected-tables.js';
import Database from 'better-sqlite3';
import { migrations } from '../../src/store/sqlite/migrations.js';
import { builtCli } from '../support/child-gateway.js';

const ROOT = join(import.meta.dirname, '..', '..');
const HANDLE = 'brightpath:telegram-bot';
const LEGACY_KEY = 'tg-legacy-key-copy-0001';

let cluster: TestPostgres | null = null;
let postgresGateway: FastifyInstance | undefined;
let sqlite: Gateway;
let file: string;
let target: string;
let v1Key: string;
let firstLead: { replay: LightMyRequestResponse; contactId: string; leadId: string };
let sqliteReport: Record<string, unknown>;
let operatorToken: string;
const CONSOLE_PASSWORD = 'a-long-console-password';

const copy = (...args: string[]) => copyInto(target, ...args);

function copyInto(url: string, ...args: string[]) {
  const env: NodeJS.ProcessEnv = { ...process.env, RULES_DIR: EXAMPLE_RULES, DATABASE_URL: url };
  delete env.DATABASE_PATH;
  const run = spawnSync(process.execPath, [builtCli(), ...args], { cwd: ROOT, env, encoding: 'utf8', timeout: 60_000 });
  return { code: run.status, out: run.stdout, err: run.stderr };
}

const v1 = (app: FastifyInstance, path: string, body: unknown) =>
  app.inject({
    method: 'POST',
    url: `/api/integrations/v1/leads/${path}`,
    headers: { authorization: `Bearer ${v1Key}` },
    payload: body as object,
  });
const legacy = (method: 'GET' | 'POST', path: string, body?: unknown) =>
  sqlite.app.inject({
    method,
    url: `/api/bots/api${path}`,
    headers: { 'x-bot-api-key': LEGACY_KEY },
    ...(body === undefined ? {} : { payload: body as object }),
  });
const reportOf = async (app: FastifyInstance) => {
  const res = await app.inject({
    method: 'GET',
    url: `/admin/v1/integrations/${HANDLE}/report`,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  expect(res.statusCode).toBe(200);
  const { generated_at: _at, ...rest } = res.json<Record<string, unknown>>();
  return rest;
};

beforeAll(async () => {
  cluster = await clusterOrSkip();
  if (!cluster) return;
  target = await freshDatabase(cluster.url);
  sqlite = await startGateway();
  file = join(sqlite.dir, 'gateway.db');
  // Keys and their audit entries, legacy calls, v1 leads with answers (mapped and not), an operator and a console user.
  expect(
    (await sqlite.admin('POST', `/admin/v1/integrations/${HANDLE}/keys/import`, { key: LEGACY_KEY })).statusCode,
  ).toBe(201);
  const legacyLead = await legacy('POST', '/leads/', {
    first_name: 'Old',
    phone: '+998901110001',
    extra_data: { telegram_id: 4242 },
  });
  expect(legacyLead.statusCode).toBe(201);
  const legacyId = legacyLead.json<{ id: string }>().id;
  expect((await legacy('POST', `/leads/${legacyId}/comments/`, { text: 'called back' })).statusCode).toBe(201);
  // Past 2^53 minor units: the amount must reach PostgreSQL's numeric digit for digit.
  expect((await legacy('POST', `/leads/${legacyId}/payments/`, { amount: '999999999999999.99' })).statusCode).toBe(201);
  v1Key = await sqlite.issueKey(HANDLE);
  const first = await v1(sqlite.app, '', {
    event_id: 'copy-1',
    external_contact_id: 'telegram:copy-1',
    first_name: 'Sevara',
    phone: '+998901110002',
  });
  expect(first.statusCode).toBe(201);
  for (let i = 2; i <= 5; i++)
    expect(
      (
        await v1(sqlite.app, '', {
          event_id: `copy-${i}`,
          external_contact_id: `telegram:copy-${i}`,
          first_name: `Person ${i}`,
        })
      ).statusCode,
    ).toBe(201);
  const answers = await v1(sqlite.app, 'answers/', {
    event_id: 'copy-a1',
    external_contact_id: 'telegram:copy-1',
    answers: { laptop: 'yes', video_watched: 'ha', favourite_colour: 'teal' },
  });
  expect(answers.statusCode).toBeLessThan(300);
  const replay = await v1(sqlite.app, '', {
    event_id: 'copy-1',
    external_contact_id: 'telegram:copy-1',
    first_name: 'Sevara',
    phone: '+998901110002',
  });
  expect(replay.json()).toMatchObject({ replayed: true });
  firstLead = {
    replay,
    contactId: first.json<{ contact_id: string }>().contact_id,
    leadId: first.json<{ lead: { id: string } }>().lead.id,
  };
  operatorToken = (await createAdminCredential(sqlite.store, 'alice', 'cli:test')).token;
  await createConsoleUser(sqlite.store, sqlite.rules.current(), {
    name: 'dilnoza',
    password: CONSOLE_PASSWORD,
    workspace: null,
    createdBy: 'cli:test',
  });
  sqliteReport = await reportOf(sqlite.app);
}, 120_000);

afterAll(async () => {
  await postgresGateway?.close();
  if (sqlite) rmSync(sqlite.dir, { recursive: true, force: true });
  await cluster?.stop();
});

describe('lead-gateway copy --from <sqlite file>', { timeout: 120_000 }, () => {
  it('is refused while a gateway has the file open, and writes nothing to PostgreSQL', async () => {
    if (!cluster) return;
    const run = copy('copy', '--from', file);
    expect(run.code).toBe(3);
    expect(run.err).toMatch(/a gateway \(or another program\) has it open: stop every gateway on this file first/);
    const client = new pg.Client({ connectionString: target });
    await client.connect();
    try {
      expect((await client.query("SELECT to_regclass('leads') AS t")).rows[0].t).toBeNull();
    } finally {
      await client.end();
    }
    // The gateway stops (its usage counts flushed), leaving the file.
    await sqlite.app.close();
  });

  it('refuses a URL on the command line: the target is DATABASE_URL', () => {
    if (!cluster) return;
    const run = copy('--database-url', 'postgres://localhost/other', 'copy', '--from', file);
    expect(run.code).toBe(2);
    expect(run.err).toMatch(/DATABASE_URL.*never --database-url/);
  });

  it('copies every table, a progress line each, and checks the counts', () => {
    if (!cluster) return;
    const run = copy('copy', '--from', file);
    expect(run.code).toBe(0);
    for (const table of COPIED_TABLES)
      expect(run.err + run.out).toMatch(new RegExp(`copied ${table}: [\\d,]+ / [\\d,]+ \\([\\d,]+ new\\)`));
    expect(run.err).toMatch(/^copied leads: 6 \/ 6 \(6 new\)$/m);
    expect(run.out).toContain(
      `Counts checked: PostgreSQL holds at least the file's rows in each of the ${COPIED_TABLES.length} tables.`,
    );
  });

  it('refuses a file that is not a lead-gateway database, or one at an older schema', () => {
    if (!cluster) return;
    const other = join(sqlite.dir, 'other.db');
    const db = new Database(other);
    db.exec('CREATE TABLE notes (body TEXT)');
    db.close();
    const foreign = copy('copy', '--from', other);
    expect(foreign.code).toBe(3);
    expect(foreign.err).toMatch(/other\.db: it is not a lead-gateway database/);
    const older = join(sqlite.dir, 'older.db');
    copyFileSync(file, older);
    const current = Math.max(...migrations.map((m) => m.version));
    const old = new Database(older);
    old.pragma(`user_version = ${current - 1}`);
    old.close();
    const run = copy('copy', '--from', older);
    expect(run.code).toBe(3);
    expect(run.err).toContain(
      `its schema is at version ${current - 1}, older than this release's ${current}: start this release's gateway on it once`,
    );
  });

  it("a second run inserts nothing, exits 0, and every count equals the file's", () => {
    if (!cluster) return;
    const run = copy('--json', 'copy', '--from', file);
    expect(run.code).toBe(0);
    expect(run.err).toMatch(/^copied leads: 6 \/ 6 \(0 new\)$/m);
    const result = JSON.parse(run.out) as {
      tables: { table: string; source: number; target: number; inserted: number }[];
      short: string[];
    };
    expect(result.short).toEqual([]);
    expect(result.tables.map((t) => t.table)).toEqual([...COPIED_TABLES]);
    for (const t of result.tables) expect(t, t.table).toMatchObject({ target: t.source, inserted: 0 });
    expect(Object.fromEntries(result.tables.map((t) => [t.table, t.source]))).toMatchObject({
      leads: 6,
      lead_comments: 1,
      lead_payments: 1,
      admin_credentials: 1,
      console_users: 1,
    });
    // Every table the cross-engine inspector compares is among the copied ones.
    for (const table of Object.values(TABLES)) expect(COPIED_TABLES).toContain(table.name);
  });

  it("derives the lead counts on PostgreSQL from the copied leads, and keeps values past a double's precision", async () => {
    if (!cluster) return;
    const file_ = new Database(file, { readonly: true });
    const sqliteCounts = file_
      .prepare(
        "SELECT kind || ':' || item_id AS k, n FROM lead_counts UNION ALL SELECT 'integration:' || integration_id, n FROM integration_lead_counts ORDER BY 1",
      )
      .all();
    const sqliteAmount = file_.prepare('SELECT CAST(amount_minor AS TEXT) FROM lead_payments').pluck().get();
    file_.close();
    const client = new pg.Client({ connectionString: target });
    await client.connect();
    try {
      const counts = await client.query(
        `SELECT k, n::int AS n FROM (SELECT kind || ':' || item_id AS k, sum(n) AS n FROM lead_counts GROUP BY 1
         UNION ALL SELECT 'integration:' || integration_id, sum(n) FROM integration_lead_counts GROUP BY 1) c ORDER BY k COLLATE "C"`,
      );
      expect(counts.rows).toEqual(sqliteCounts);
      expect((await client.query('SELECT amount_minor::text AS a FROM lead_payments')).rows).toEqual([
        { a: '99999999999999999' },
      ]);
      expect(sqliteAmount).toBe('99999999999999999');
      expect(
        (await client.query('SELECT boolean_value AS b FROM custom_field_values WHERE boolean_value IS NOT NULL')).rows,
      ).toEqual([{ b: true }]);
    } finally {
      await client.end();
    }
  });

  it('counts the kept answers of a key again where the database held answers of its own for it', async () => {
    if (!cluster) return;
    const other = await freshDatabase(cluster.url);
    expect(copyInto(other, 'copy', '--from', file).code).toBe(0);
    const client = new pg.Client({ connectionString: other });
    await client.connect();
    try {
      const kept = async () =>
        (await client.query("SELECT answers::int AS n FROM answers_kept WHERE answer_key = 'favourite_colour'")).rows;
      expect(await kept()).toEqual([{ n: 1 }]);
      // An answer a gateway stored there for the same key: the copy's rows left the key's count at one figure.
      await client.query(
        "INSERT INTO answers (id, submission_id, integration_id, lead_id, answer_key, raw_value, outcome, created_at) SELECT id || '-pg', submission_id, integration_id, lead_id, answer_key, raw_value, outcome, created_at FROM answers WHERE answer_key = 'favourite_colour'",
      );
      expect(copyInto(other, 'copy', '--from', file).code).toBe(0);
      expect(await kept()).toEqual([{ n: 2 }]);
    } finally {
      await client.end();
    }
  });

  it('a gateway on the copy replays, matches and reports as the one on the file did', async () => {
    if (!cluster) return;
    const store = await openStore({ engine: 'postgres', url: target, poolSize: 2 });
    const app = await buildApp(
      { adminToken: ADMIN_TOKEN },
      { store, rules: createRulesHolder(EXAMPLE_RULES), logger: createLogger('silent') },
    );
    postgresGateway = app;
    // First, before this gateway's own calls count in it.
    expect(await reportOf(app)).toEqual(sqliteReport);
    const replay = await v1(app, '', {
      event_id: 'copy-1',
      external_contact_id: 'telegram:copy-1',
      first_name: 'Sevara',
      phone: '+998901110002',
    });
    expect(replay.statusCode).toBe(firstLead.replay.statusCode);
    expect(replay.body).toBe(firstLead.replay.body);
    const matched = await v1(app, '', {
      event_id: 'copy-6',
      external_contact_id: 'telegram:copy-1',
      first_name: 'Sevara',
    });
    // The person's copied lead is joined (200), as on the file.
    expect(matched.statusCode).toBe(200);
    expect(matched.json()).toMatchObject({
      matched_existing: true,
      contact_id: firstLead.contactId,
      replayed: false,
      lead: { id: firstLead.leadId },
    });
    // The operator's token and the console user came along.
    const asAlice = await app.inject({
      method: 'GET',
      url: '/admin/v1/integrations',
      headers: { authorization: `Bearer ${operatorToken}` },
    });
    expect(asAlice.statusCode).toBe(200);
    expect(await checkSignIn(store, 'dilnoza', CONSOLE_PASSWORD)).toMatchObject({ name: 'dilnoza' });
    const legacyList = await app.inject({
      method: 'GET',
      url: '/api/bots/api/leads/',
      headers: { 'x-bot-api-key': LEGACY_KEY },
    });
    expect(legacyList.statusCode).toBe(200);
  });

  it('copies the rows a gateway killed mid-run left in the -wal file', () => {
    if (!cluster) return;
    // What a kill leaves: the file and its -wal as they are while a connection still has them open.
    const crashed = join(sqlite.dir, 'crashed.db');
    copyFileSync(file, crashed);
    const writer = new Database(crashed);
    writer.pragma('journal_mode = WAL');
    writer.pragma('wal_autocheckpoint = 0');
    writer
      .prepare('INSERT INTO legacy_tags (workspace_id, id, name, color, created_at) VALUES (?, ?, ?, ?, ?)')
      .run('w-crash', 't-crash', 'only in the wal', null, '2026-11-26T00:00:00.000Z');
    copyFileSync(crashed, join(sqlite.dir, 'image.db'));
    copyFileSync(`${crashed}-wal`, join(sqlite.dir, 'image.db-wal'));
    writer.close();
    const run = copy('copy', '--from', join(sqlite.dir, 'image.db'));
    expect(run.code).toBe(0);
    expect(run.err).toMatch(/^copied legacy_tags: 1 \/ 1 \(1 new\)$/m);
    expect(run.err).toMatch(/^copied leads: 6 \/ 6 \(0 new\)$/m);
  });

  it('finding 6: refuses a file whose rows name rows it does not hold, naming each by table, column and key, and writes nothing', async () => {
    if (!cluster) return;
    const orphaned = join(sqlite.dir, 'orphaned.db');
    copyFileSync(file, orphaned);
    const db = new Database(orphaned);
    // As the sqlite3 shell leaves them: rows go in whatever they name.
    db.pragma('foreign_keys = OFF');
    const bind = db.prepare(
      'INSERT INTO contact_bindings (integration_id, external_contact_id, contact_id, created_at) VALUES (?, ?, ?, ?)',
    );
    for (let i = 1; i <= 12; i++)
      bind.run(
        'int-orphan',
        `telegram:orphan-${String(i).padStart(2, '0')}`,
        'contact-gone',
        '2026-11-26T00:00:00.000Z',
      );
    // A bot's own text holding an escape sequence: shown escaped, never handed to the terminal as it is.
    bind.run('int-orphan', 'telegram:\u001b[2Jclear', 'contact-gone-2', '2026-11-26T00:00:00.000Z');
    db.prepare('INSERT INTO lead_tags (lead_id, tag_id) VALUES (?, ?)').run('lead-gone', 'tag-1');
    db.close();
    const empty = await freshDatabase(cluster.url);
    const run = copyInto(empty, 'copy', '--from', orphaned);
    expect(run.code).toBe(1);
    expect(run.out).toBe('');
    const lines = run.err.split('\n');
    expect(lines[0]).toBe(
      `error: ${orphaned}: 14 rows name a row the file does not hold (written while SQLite's foreign keys were off); nothing was copied:`,
    );
    expect(lines[1]).toBe(
      '  contact_bindings.contact_id names a row of contacts that is not there: 13 rows, the first 10 by key:',
    );
    expect(lines[2]).toBe(
      '    integration_id "int-orphan", external_contact_id "telegram:\\u001b[2Jclear": contact_id "contact-gone-2"',
    );
    expect(lines.slice(3, 12)).toEqual(
      Array.from(
        { length: 9 },
        (_, i) =>
          `    integration_id "int-orphan", external_contact_id "telegram:orphan-0${i + 1}": contact_id "contact-gone"`,
      ),
    );
    expect(lines[12]).toBe('  lead_tags.lead_id names a row of leads that is not there: 1 row:');
    expect(lines[13]).toBe('    lead_id "lead-gone", tag_id "tag-1": lead_id "lead-gone"');
    expect(lines[14]).toMatch(/^Repair or delete these rows in the file .*docs\/runbook\.md.*, then copy again\.$/);
    expect(run.err).not.toContain('\u001b');
    expect(run.err).not.toMatch(/copied /);
    // Nothing reached PostgreSQL, not even the schema.
    const client = new pg.Client({ connectionString: empty });
    await client.connect();
    try {
      expect((await client.query("SELECT to_regclass('leads') AS t")).rows[0].t).toBeNull();
    } finally {
      await client.end();
    }
  });

  it('stops at a row PostgreSQL refuses, naming the table and where, exit code 3', () => {
    if (!cluster) return;
    const refused = join(sqlite.dir, 'refused.db');
    copyFileSync(file, refused);
    const db = new Database(refused);
    // A NUL character: SQLite stores it in text, PostgreSQL's text refuses it.
    db.prepare('INSERT INTO legacy_tags (workspace_id, id, name, color, created_at) VALUES (?, ?, ?, ?, ?)').run(
      'w-nul',
      't-nul',
      'a\u0000b',
      null,
      '2026-11-26T00:00:00.000Z',
    );
    db.close();
    const run = copy('copy', '--from', refused);
    expect(run.code).toBe(3);
    expect(run.err).toMatch(/^error: legacy_tags: the batch after row 0 of 1 was refused by PostgreSQL: .*0x00/m);
    expect(run.err).not.toMatch(/copied legacy_tags/);
  });
});
