// The PostgreSQL migration runner: in order, once, recorded, the failing one named, and safe when
// several processes start at once (the advisory lock).
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, migrations, type Migration } from '../../../src/store/postgres/migrations.js';
import { createPool } from '../../../src/store/postgres/pool.js';
import { clusterOrSkip, freshDatabase, type TestPostgres } from '../../support/postgres.js';

let cluster: TestPostgres | null = null;
beforeAll(async () => void (cluster = await clusterOrSkip()), 60_000);
afterAll(async () => cluster?.stop());

const pools: pg.Pool[] = [];
afterAll(async () => Promise.all(pools.map((p) => p.end())));
const poolOn = (url: string) => {
  const pool = createPool({ url, poolSize: 2 });
  pools.push(pool);
  return pool;
};

const tables = async (pool: pg.Pool) =>
  (
    await pool.query<{ name: string }>(
      "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename",
    )
  ).rows.map((r) => r.name);
const recorded = async (pool: pg.Pool) =>
  (await pool.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version')).rows.map(
    (r) => r.version,
  );

describe('PostgreSQL migrations', () => {
  it('applies every migration once and records each version', async (context) => {
    if (!cluster) return context.skip();
    const pool = poolOn(await freshDatabase(cluster.url));
    const latest = Math.max(...migrations.map((m) => m.version));
    expect(await migrate(pool)).toEqual({ version: latest, applied: migrations.map((m) => m.version) });
    expect(await recorded(pool)).toEqual(migrations.map((m) => m.version));
    expect(await tables(pool)).toEqual(
      expect.arrayContaining(['api_keys', 'contacts', 'leads', 'submissions', 'lead_payments', 'admin_credentials']),
    );
    expect(await migrate(pool)).toEqual({ version: latest, applied: [] });
    expect(await recorded(pool)).toEqual(migrations.map((m) => m.version));
  });

  it('indexes leads as SQLite does: not by status or group, whose counts are kept apart (migration 8)', async (context) => {
    if (!cluster) return context.skip();
    const pool = poolOn(await freshDatabase(cluster.url));
    await migrate(pool);
    const indexes = (
      await pool.query<{ name: string }>(
        "SELECT indexname AS name FROM pg_indexes WHERE tablename = 'leads' ORDER BY indexname",
      )
    ).rows.map((r) => r.name);
    expect(indexes).toEqual([
      'leads_contact',
      'leads_integration_page',
      'leads_legacy',
      'leads_pkey',
      'leads_unlinked_legacy',
    ]);
  });

  it('indexes answers only for what reads them: not by submission, an entry every answer wrote and no statement read (migration 11)', async (context) => {
    if (!cluster) return context.skip();
    const pool = poolOn(await freshDatabase(cluster.url));
    const version = migrations.find((m) => m.name === 'no index of answers by submission')!.version;
    const indexesOfAnswers = async () =>
      (
        await pool.query<{ name: string }>(
          "SELECT indexname AS name FROM pg_indexes WHERE tablename = 'answers' ORDER BY indexname",
        )
      ).rows.map((r) => r.name);
    await migrate(
      pool,
      migrations.filter((m) => m.version < version),
    );
    expect(await indexesOfAnswers()).toContain('answers_submission');
    await migrate(pool);
    expect(await indexesOfAnswers()).toEqual(['answers_kept_age', 'answers_pkey', 'answers_unmapped']);
  });

  it("keeps an event's recorded outcome as text, its members in their order; an outcome recorded as jsonb before keeps jsonb's order", async (context) => {
    if (!cluster) return context.skip();
    const pool = poolOn(await freshDatabase(cluster.url));
    const asText = migrations.find(
      (m) => m.name === 'the recorded outcome of an event as the text it was recorded with',
    )!;
    await migrate(
      pool,
      migrations.filter((m) => m.version < asText.version),
    );
    const insert = (id: string, outcome: string) =>
      pool.query(
        "INSERT INTO submissions (id, integration_id, endpoint, event_id, fingerprint, body, outcome, created_at) VALUES ($1, 'i', 'answers', $1, 'f', '{}', $2, 't')",
        [id, outcome],
      );
    const outcomeOf = async (id: string) =>
      (await pool.query<{ outcome: string }>('SELECT outcome FROM submissions WHERE id = $1', [id])).rows[0]!.outcome;
    await insert('old', '{"written":["a"],"unchanged":[],"invalid":[]}');
    await migrate(pool);
    expect(await outcomeOf('old')).toBe('{"invalid": [], "written": ["a"], "unchanged": []}');
    await insert('new', '{"written":["a"],"unchanged":[],"invalid":[]}');
    expect(await outcomeOf('new')).toBe('{"written":["a"],"unchanged":[],"invalid":[]}');
  });

  it('counts the unmapped and invalid answers stored before, per integration and key, for the keep caps (as SQLite migration 16)', async (context) => {
    if (!cluster) return context.skip();
    const pool = poolOn(await freshDatabase(cluster.url));
    const version = migrations.find((m) => m.name === 'answer caps and retention')!.version;
    await migrate(
      pool,
      migrations.filter((m) => m.version < version),
    );
    await pool.query(
      "INSERT INTO contacts (id, workspace_id, first_name, created_at, updated_at) VALUES ('c', 'w', 'x', 't', 't')",
    );
    await pool.query(
      "INSERT INTO leads (id, workspace_id, contact_id, first_name, created_at, updated_at) VALUES ('l', 'w', 'c', 'x', 't', 't')",
    );
    const answer = (id: string, integrationId: string, key: string, raw: string, outcome: string) =>
      pool.query(
        "INSERT INTO answers (id, submission_id, integration_id, lead_id, answer_key, raw_value, outcome, created_at) VALUES ($1, 's', $2, 'l', $3, $4, $5, 't')",
        [id, integrationId, key, raw, outcome],
      );
    await answer('a1', 'i1', 'colour', '"red"', 'unmapped');
    await answer('a2', 'i1', 'colour', '"blue"', 'unmapped');
    await answer('a3', 'i1', 'age', '"x"', 'invalid');
    await answer('a4', 'i1', 'course', '"python"', 'written');
    await answer('a5', 'i2', 'colour', '"é"', 'unmapped');
    await migrate(pool);
    const rows = await pool.query(
      'SELECT integration_id, answer_key, answers::int, bytes::int FROM answers_kept ORDER BY 1, 2',
    );
    expect(rows.rows).toEqual([
      { integration_id: 'i1', answer_key: 'age', answers: 1, bytes: 3 + 3 },
      { integration_id: 'i1', answer_key: 'colour', answers: 2, bytes: 6 + 5 + 6 + 6 },
      { integration_id: 'i2', answer_key: 'colour', answers: 1, bytes: 6 + 4 },
    ]);
  });

  it('marks the legacy leads whose person has no binding of their integration, from the backfill on (as SQLite migration 24)', async (context) => {
    if (!cluster) return context.skip();
    const pool = poolOn(await freshDatabase(cluster.url));
    const version = migrations.find((m) => m.name === 'unlinked legacy leads marked, kept so by triggers')!.version;
    await migrate(
      pool,
      migrations.filter((m) => m.version < version),
    );
    const lead = (id: string, contact: string, integration: string, origin: string) =>
      pool.query(
        "INSERT INTO leads (id, workspace_id, contact_id, integration_id, origin, first_name, created_at, updated_at) VALUES ($1, 'w', $2, $3, $4, 'x', 't', 't')",
        [id, contact, integration, origin],
      );
    const bind = (external: string, contact: string) =>
      pool.query(
        "INSERT INTO contact_bindings (integration_id, external_contact_id, contact_id, created_at) VALUES ('i1', $1, $2, 't')",
        [external, contact],
      );
    for (const c of ['bound', 'free'])
      await pool.query(
        "INSERT INTO contacts (id, workspace_id, first_name, created_at, updated_at) VALUES ($1, 'w', 'x', 't', 't')",
        [c],
      );
    await bind('tg:1', 'bound');
    await lead('bound-legacy', 'bound', 'i1', 'legacy');
    await lead('unbound-legacy', 'free', 'i1', 'legacy');
    await lead('bound-elsewhere', 'bound', 'i2', 'legacy');
    await lead('unbound-v1', 'free', 'i1', 'v1');
    await migrate(pool);
    const marked = async () => (await pool.query('SELECT id FROM leads WHERE unlinked_legacy ORDER BY id')).rows;
    expect(await marked()).toEqual([{ id: 'bound-elsewhere' }, { id: 'unbound-legacy' }]);
    // From then on the triggers keep it: a binding made, a lead of a bound person, a binding removed.
    await bind('tg:2', 'free');
    await lead('later-legacy', 'bound', 'i1', 'legacy');
    expect(await marked()).toEqual([{ id: 'bound-elsewhere' }]);
    await pool.query("DELETE FROM contact_bindings WHERE external_contact_id = 'tg:1'");
    expect(await marked()).toEqual([{ id: 'bound-elsewhere' }, { id: 'bound-legacy' }, { id: 'later-legacy' }]);
  });

  it('admits test keys and their calls counted apart, keeping the rows before, and still refuses an unknown kind (as SQLite migration 19)', async (context) => {
    if (!cluster) return context.skip();
    const pool = poolOn(await freshDatabase(cluster.url));
    const version = migrations.find((m) => m.name === 'test keys and their calls counted apart')!.version;
    await migrate(
      pool,
      migrations.filter((m) => m.version < version),
    );
    await pool.query("INSERT INTO api_keys VALUES ('k1', 'i1', 'v1', 'lgv1_abc', 'h1', 't1', 'ops', NULL)");
    await expect(
      pool.query("INSERT INTO api_keys VALUES ('k3', 'i1', 'test', 'lgtest_abc', 'h3', 't1', 'ops', NULL)"),
    ).rejects.toThrow(/api_keys_kind_check/);
    await migrate(pool);
    await pool.query("INSERT INTO api_keys VALUES ('k3', 'i1', 'test', 'lgtest_abc', 'h3', 't1', 'ops', NULL)");
    await pool.query(
      "INSERT INTO api_usage (integration_id, interface, route, hour, calls, last_seen, ok_calls, last_ok) VALUES ('i1', 'v1-test', 'POST /x', 'h', 1, 't', 1, 't')",
    );
    expect((await pool.query('SELECT id, kind FROM api_keys ORDER BY id')).rows).toEqual([
      { id: 'k1', kind: 'v1' },
      { id: 'k3', kind: 'test' },
    ]);
    await expect(
      pool.query("INSERT INTO api_keys VALUES ('k4', 'i1', 'other', 'x', 'h4', 't1', 'ops', NULL)"),
    ).rejects.toThrow(/api_keys_kind_check/);
    await expect(
      pool.query(
        "INSERT INTO api_usage (integration_id, interface, route, hour, calls, last_seen) VALUES ('i1', 'other', 'r', 'h', 1, 't')",
      ),
    ).rejects.toThrow(/api_usage_interface_check/);
  });

  it('checks no foreign key on the rows a new lead writes, keeping the rows and the keys of comments and payments (migration 16)', async (context) => {
    if (!cluster) return context.skip();
    const pool = poolOn(await freshDatabase(cluster.url));
    const version = migrations.find((m) => m.name === 'no foreign keys on the rows a new lead writes')!.version;
    await migrate(
      pool,
      migrations.filter((m) => m.version < version),
    );
    const foreignKeys = async () =>
      (
        await pool.query<{ name: string }>(
          "SELECT conname AS name FROM pg_constraint WHERE contype = 'f' AND connamespace = 'public'::regnamespace ORDER BY conname",
        )
      ).rows.map((r) => r.name);
    await pool.query(
      "INSERT INTO contacts (id, workspace_id, first_name, created_at, updated_at) VALUES ('c', 'w', 'x', 't', 't')",
    );
    await pool.query("INSERT INTO contact_bindings VALUES ('i', 'e', 'c', 't')");
    await pool.query(
      "INSERT INTO leads (id, workspace_id, contact_id, first_name, created_at, updated_at) VALUES ('l', 'w', 'c', 'x', 't', 't')",
    );
    await pool.query("INSERT INTO lead_tags VALUES ('l', 'tag')");
    await pool.query(
      "INSERT INTO custom_field_values (id, lead_id, field_id, text_value, written_by_kind, updated_at) VALUES ('v', 'l', 'f', 'a', 'integration', 't')",
    );
    await pool.query(
      "INSERT INTO answers (id, submission_id, integration_id, lead_id, answer_key, raw_value, outcome, created_at) VALUES ('a', 's', 'i', 'l', 'k', '1', 'written', 't')",
    );
    await expect(pool.query("INSERT INTO lead_tags VALUES ('no-such-lead', 'tag')")).rejects.toThrow(
      /lead_tags_lead_id_fkey/,
    );
    await migrate(pool);
    // The webhook tables (migration 28), off the lead's path, keep theirs.
    expect((await foreignKeys()).filter((name) => !name.startsWith('webhook_'))).toEqual([
      'lead_comments_lead_id_fkey',
      'lead_payments_lead_id_fkey',
    ]);
    const count = async (table: string) =>
      Number((await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`)).rows[0]!.n);
    for (const table of ['contacts', 'contact_bindings', 'leads', 'lead_tags', 'custom_field_values', 'answers'])
      expect(await count(table)).toBe(1);
    await expect(
      pool.query(
        "INSERT INTO lead_comments (id, lead_id, body, author_kind, created_at) VALUES ('m', 'no-such-lead', 'b', 'employee', 't')",
      ),
    ).rejects.toThrow(/lead_comments_lead_id_fkey/);
  });

  it('keys field values by lead and field, without the index of their ids, keeping every value and id (migration 17)', async (context) => {
    if (!cluster) return context.skip();
    const pool = poolOn(await freshDatabase(cluster.url));
    const version = migrations.find((m) => m.name === 'field values keyed by their lead and field only')!.version;
    await migrate(
      pool,
      migrations.filter((m) => m.version < version),
    );
    const value = (id: string, field: string, text: string) =>
      pool.query(
        `INSERT INTO custom_field_values (id, lead_id, field_id, text_value, written_by_kind, updated_at) VALUES ($1, 'l', $2, $3, 'integration', 't')
         ON CONFLICT (lead_id, field_id) DO UPDATE SET text_value = excluded.text_value`,
        [id, field, text],
      );
    await value('v1', 'f1', 'a');
    await value('v2', 'f2', 'b');
    await migrate(pool);
    const indexes = (
      await pool.query<{ name: string; definition: string }>(
        "SELECT indexname AS name, indexdef AS definition FROM pg_indexes WHERE tablename = 'custom_field_values'",
      )
    ).rows;
    expect(indexes).toEqual([
      { name: 'custom_field_values_pkey', definition: expect.stringContaining('(lead_id, field_id)') as string },
    ]);
    await value('v3', 'f1', 'c');
    await expect(
      pool.query(
        "INSERT INTO custom_field_values (id, lead_id, field_id, written_by_kind, updated_at) VALUES ('v4', 'l', 'f2', 'integration', 't')",
      ),
    ).rejects.toThrow(/custom_field_values_pkey/);
    expect(
      (await pool.query('SELECT id, field_id, text_value FROM custom_field_values ORDER BY field_id')).rows,
    ).toEqual([
      { id: 'v1', field_id: 'f1', text_value: 'c' },
      { id: 'v2', field_id: 'f2', text_value: 'b' },
    ]);
  });

  it("finds a person's latest lead by its index even when planned on an empty table (migration 18)", async (context) => {
    if (!cluster) return context.skip();
    const pool = poolOn(await freshDatabase(cluster.url));
    await migrate(pool);
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      // The holds' latest-lead query (lead_gateway_hold, migration 23), as a generic plan of its parameter, planned while leads is empty.
      await client.query("SET plan_cache_mode = 'force_generic_plan'");
      await client.query(
        'PREPARE latest(text) AS SELECT id FROM leads WHERE contact_id = $1 AND deleted_at IS NULL ORDER BY created_at DESC, id DESC LIMIT 1',
      );
      const plan = (await client.query<{ 'QUERY PLAN': string }>("EXPLAIN EXECUTE latest('c1')")).rows
        .map((r) => r['QUERY PLAN'])
        .join('\n');
      expect(plan).toMatch(/Index (Only )?Scan Backward using leads_contact/);
      expect(plan).toMatch(/Index Cond: \(contact_id = /);
      expect(plan).not.toMatch(/Sort/);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });

  it('names a failing migration and leaves the earlier ones applied, the failed one not at all', async (context) => {
    if (!cluster) return context.skip();
    const pool = poolOn(await freshDatabase(cluster.url));
    const list: Migration[] = [
      { version: 1, name: 'first', sql: 'CREATE TABLE a (x int)' },
      { version: 2, name: 'broken', sql: 'CREATE TABLE b (y int); CREATE TABLE a (x int)' },
    ];
    await expect(migrate(pool, list)).rejects.toThrow(/migration 2 \(broken\) failed: .*already exists/);
    expect(await recorded(pool)).toEqual([1]);
    expect(await tables(pool)).toEqual(['a', 'schema_migrations']);
    // The lock was given back: the next run takes it and applies the fixed migration.
    expect(await migrate(pool, [list[0]!, { version: 2, name: 'fixed', sql: 'CREATE TABLE b (y int)' }])).toEqual({
      version: 2,
      applied: [2],
    });
  });

  it('refuses a schema newer than the gateway knows (a rolled-back release), changing nothing', async (context) => {
    if (!cluster) return context.skip();
    const pool = poolOn(await freshDatabase(cluster.url));
    const list: Migration[] = [
      { version: 1, name: 'first', sql: 'CREATE TABLE a (x int)' },
      { version: 2, name: 'second', sql: 'CREATE TABLE b (y int)' },
    ];
    await migrate(pool, list);
    await expect(migrate(pool, [list[0]!])).rejects.toThrow(
      "the database schema is at version 2, newer than this gateway's 1: run a gateway release that knows it",
    );
    expect(await recorded(pool)).toEqual([1, 2]);
  });

  it('keeps versions unique and increasing (the list is append-only)', () => {
    const versions = migrations.map((m) => m.version);
    expect(versions).toEqual([...versions].sort((a, b) => a - b));
    expect(new Set(versions).size).toBe(versions.length);
  });

  it('lets several processes migrate one database at once: all succeed, each migration is applied once', async (context) => {
    if (!cluster) return context.skip();
    const url = await freshDatabase(cluster.url);
    // Each pool is its own set of sessions, as replicas starting together are; the slow first
    // migration keeps the others waiting on the lock while it runs.
    const list: Migration[] = [
      { version: 1, name: 'slow', sql: 'SELECT pg_sleep(0.3); CREATE TABLE a (x int)' },
      { version: 2, name: 'second', sql: 'CREATE TABLE b (y int)' },
    ];
    const runs = await Promise.all([1, 2, 3, 4].map(() => migrate(poolOn(url), list)));
    expect(runs.flatMap((r) => r.applied).sort()).toEqual([1, 2]);
    expect(runs.map((r) => r.version)).toEqual([2, 2, 2, 2]);
    const pool = poolOn(url);
    expect(await recorded(pool)).toEqual([1, 2]);
    expect(await tables(pool)).toEqual(['a', 'b', 'schema_migrations']);
  });

  it("lets a replica wait for another's migration longer than a statement may run, and apply one longer than that", async (context) => {
    if (!cluster) return context.skip();
    const url = await freshDatabase(cluster.url);
    const short = () => {
      const pool = createPool({ url, poolSize: 2, statementTimeoutMs: 100 });
      pools.push(pool);
      return pool;
    };
    const list: Migration[] = [{ version: 1, name: 'slow', sql: 'SELECT pg_sleep(1.2); CREATE TABLE a (x int)' }];
    const runs = await Promise.all([migrate(short(), list), migrate(short(), list)]);
    expect(runs.flatMap((r) => r.applied)).toEqual([1]);
    // The migrating session's own limits were lifted, never the pool's: its next statements are bounded again.
    const pool = short();
    await expect(pool.query('SELECT pg_sleep(0.5)')).rejects.toMatchObject({ code: '57014' });
  });

  it('keeps lead counts per status, group and integration equal to counting the leads', async (context) => {
    if (!cluster) return context.skip();
    const pool = poolOn(await freshDatabase(cluster.url));
    await migrate(pool);
    await pool.query(
      "INSERT INTO contacts (id, workspace_id, first_name, created_at, updated_at) VALUES ('c', 'w', 'x', 't', 't')",
    );
    const insert = (
      id: string,
      status: string | null,
      group: string | null,
      integration: string | null,
      deleted: string | null,
    ) =>
      pool.query(
        "INSERT INTO leads (id, workspace_id, contact_id, first_name, status_id, group_id, integration_id, created_at, updated_at, deleted_at) VALUES ($1, 'w', 'c', 'x', $2, $3, $4, 't', 't', $5)",
        [id, status, group, integration, deleted],
      );
    await insert('l1', 's1', 'g1', 'i1', null);
    await insert('l2', 's1', null, 'i1', null);
    await insert('l3', 's2', 'g1', 'i2', 't');
    await insert('l4', 's2', 'g2', null, null);
    await insert('l5', null, 'g2', 'i2', null);
    await pool.query("UPDATE leads SET status_id = 's2' WHERE id = 'l1'");
    await pool.query("UPDATE leads SET group_id = NULL, integration_id = 'i1' WHERE id = 'l4'");
    await pool.query("UPDATE leads SET deleted_at = 't' WHERE id = 'l2'");
    await pool.query("UPDATE leads SET deleted_at = NULL WHERE id = 'l3'");
    await pool.query("DELETE FROM leads WHERE id = 'l5'");
    await pool.query("UPDATE leads SET first_name = 'y'");

    const counted = async (column: string) =>
      Object.fromEntries(
        (
          await pool.query<{ id: string; n: number }>(
            `SELECT ${column} AS id, count(*)::int AS n FROM leads WHERE ${column} IS NOT NULL AND deleted_at IS NULL GROUP BY ${column}`,
          )
        ).rows.map((r) => [r.id, r.n]),
      );
    const kept = async (kind: string) =>
      Object.fromEntries(
        (
          await pool.query<{ id: string; n: number }>(
            'SELECT item_id AS id, sum(n)::int AS n FROM lead_counts WHERE kind = $1 GROUP BY item_id HAVING sum(n) > 0',
            [kind],
          )
        ).rows.map((r) => [r.id, r.n]),
      );
    const keptOfIntegrations = async () =>
      Object.fromEntries(
        (
          await pool.query<{ id: string; n: number }>(
            'SELECT integration_id AS id, sum(n)::int AS n FROM integration_lead_counts GROUP BY integration_id HAVING sum(n) > 0',
          )
        ).rows.map((r) => [r.id, r.n]),
      );
    expect(await kept('status')).toEqual(await counted('status_id'));
    expect(await kept('group')).toEqual(await counted('group_id'));
    expect(await keptOfIntegrations()).toEqual(await counted('integration_id'));
    expect(await counted('status_id')).toEqual({ s2: 3 });
  });

  it('recounts the lead counts into stripes (migration 3), and a new lead no longer waits for another uncommitted one of its status', async (context) => {
    if (!cluster) return context.skip();
    const url = await freshDatabase(cluster.url);
    const pool = poolOn(url);
    await migrate(
      pool,
      migrations.filter((m) => m.version < 3),
    );
    await pool.query(
      "INSERT INTO contacts (id, workspace_id, first_name, created_at, updated_at) VALUES ('c', 'w', 'x', 't', 't')",
    );
    const insert = (on: { query: typeof pool.query }, id: string, deleted: string | null = null) =>
      on.query(
        "INSERT INTO leads (id, workspace_id, contact_id, first_name, status_id, group_id, integration_id, created_at, updated_at, deleted_at) VALUES ($1, 'w', 'c', 'x', 's1', 'g1', 'i1', 't', 't', $2)",
        [id, deleted],
      );
    for (let i = 0; i < 40; i++) await insert(pool, `old-${i}`, i % 10 === 0 ? 't' : null);
    await migrate(pool);
    const sum = async (sql: string) => Number((await pool.query<{ n: string }>(sql)).rows[0]!.n);
    expect(await sum("SELECT sum(n) AS n FROM lead_counts WHERE kind = 'status' AND item_id = 's1'")).toBe(36);
    expect(await sum("SELECT sum(n) AS n FROM integration_lead_counts WHERE integration_id = 'i1'")).toBe(36);
    expect(await sum("SELECT count(*) AS n FROM lead_counts WHERE kind = 'status'")).toBeGreaterThan(1);
    // Two leads of one status whose ids fall into different stripes: the second commits while the
    // first unit is still open (before, it waited for the first unit's COMMIT on the one count row).
    const stripeOf = async (id: string) =>
      Number((await pool.query<{ s: string }>('SELECT abs(hashtext($1) % 16) AS s', [id])).rows[0]!.s);
    const first = 'new-a';
    let second = 'new-b0';
    for (let i = 1; (await stripeOf(second)) === (await stripeOf(first)); i++) second = `new-b${i}`;
    const open = await pool.connect();
    try {
      await open.query('BEGIN');
      await insert(open, first);
      const other = poolOn(url);
      await other.query("SET lock_timeout = '2s'");
      await expect(insert(other, second)).resolves.toBeDefined();
      await open.query('COMMIT');
    } finally {
      open.release();
    }
    expect(await sum("SELECT sum(n) AS n FROM lead_counts WHERE kind = 'status' AND item_id = 's1'")).toBe(38);
  });
});
