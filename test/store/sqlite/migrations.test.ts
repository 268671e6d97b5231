// The migration runner: in order, once, each in its own transaction, the failing one named.
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { migrate, migrations, type Migration } from '../../../src/store/sqlite/migrations.js';

const tables = (db: Database.Database) =>
  (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]).map(
    (r) => r.name,
  );

describe('migrate', () => {
  it('applies every migration once and records the version', () => {
    const db = new Database(':memory:');
    expect(migrate(db)).toEqual(migrations.map((m) => m.version));
    expect(db.pragma('user_version', { simple: true })).toBe(migrations.at(-1)!.version);
    expect(tables(db)).toEqual(expect.arrayContaining(['api_keys', 'contacts', 'leads', 'submissions']));
    expect(migrate(db)).toEqual([]);
  });

  it('names a failing migration and leaves the earlier ones applied, the failed one not at all', () => {
    const db = new Database(':memory:');
    const list: Migration[] = [
      { version: 1, name: 'first', up: (d) => d.exec('CREATE TABLE a (x)') },
      { version: 2, name: 'broken', up: (d) => d.exec('CREATE TABLE b (y); CREATE TABLE a (x)') },
    ];
    expect(() => migrate(db, list)).toThrow(/migration 2 \(broken\) failed: .*already exists/);
    expect(db.pragma('user_version', { simple: true })).toBe(1);
    expect(tables(db)).toEqual(['a']);
  });

  it('refuses a schema newer than the gateway knows (a rolled-back release), changing nothing', () => {
    const db = new Database(':memory:');
    const list: Migration[] = [
      { version: 1, name: 'first', up: (d) => d.exec('CREATE TABLE a (x)') },
      { version: 2, name: 'second', up: (d) => d.exec('CREATE TABLE b (y)') },
    ];
    migrate(db, list);
    expect(() => migrate(db, [list[0]!])).toThrow(
      "the database schema is at version 2, newer than this gateway's 1: run a gateway release that knows it",
    );
    expect(db.pragma('user_version', { simple: true })).toBe(2);
  });

  it('keeps versions unique and increasing (the list is append-only)', () => {
    const versions = migrations.map((m) => m.version);
    expect(versions).toEqual([...versions].sort((a, b) => a - b));
    expect(new Set(versions).size).toBe(versions.length);
  });

  it('keeps lead counts per status and group equal to counting the leads, from the backfill on (migration 6)', () => {
    const db = new Database(':memory:');
    db.pragma('foreign_keys = OFF'); // leads only: their contacts do not matter here
    migrate(
      db,
      migrations.filter((m) => m.version < 6),
    );
    const insert = db.prepare(
      "INSERT INTO leads (id, workspace_id, contact_id, first_name, status_id, group_id, created_at, updated_at, deleted_at) VALUES (?, 'w', 'c', 'x', ?, ?, 't', 't', ?)",
    );
    insert.run('old-1', 's1', 'g1', null);
    insert.run('old-2', 's1', null, null);
    insert.run('old-3', 's2', 'g1', 't'); // deleted before the migration: not counted
    migrate(db);
    insert.run('new-1', 's2', 'g2', null);
    insert.run('new-2', null, 'g2', null);
    db.prepare("UPDATE leads SET status_id = 's2' WHERE id = 'old-1'").run();
    db.prepare("UPDATE leads SET group_id = NULL WHERE id = 'new-1'").run();
    db.prepare("UPDATE leads SET deleted_at = 't' WHERE id = 'old-2'").run();
    db.prepare("UPDATE leads SET deleted_at = NULL WHERE id = 'old-3'").run();
    db.prepare("DELETE FROM leads WHERE id = 'new-2'").run();
    db.prepare("UPDATE leads SET first_name = 'y'").run(); // other columns leave the counts alone

    const counted = (column: string) =>
      Object.fromEntries(
        (
          db
            .prepare(
              `SELECT ${column} AS id, count(*) AS n FROM leads WHERE ${column} IS NOT NULL AND deleted_at IS NULL GROUP BY ${column}`,
            )
            .all() as { id: string; n: number }[]
        ).map((r) => [r.id, r.n]),
      );
    const kept = (kind: string) =>
      Object.fromEntries(
        (
          db.prepare('SELECT item_id AS id, n FROM lead_counts WHERE kind = ? AND n > 0').all(kind) as {
            id: string;
            n: number;
          }[]
        ).map((r) => [r.id, r.n]),
      );
    expect(counted('status_id')).toEqual({ s2: 3 });
    expect(kept('status')).toEqual(counted('status_id'));
    expect(kept('group')).toEqual(counted('group_id'));
    expect(kept('group')).toEqual({ g1: 2 });
  });

  it('counts the unmapped and invalid answers stored before, per integration and key, for the keep caps (migration 16)', () => {
    const db = new Database(':memory:');
    db.pragma('foreign_keys = OFF'); // answers only: their leads do not matter here
    migrate(
      db,
      migrations.filter((m) => m.version < 16),
    );
    const answer = db.prepare(
      "INSERT INTO answers (id, submission_id, integration_id, lead_id, answer_key, raw_value, outcome, created_at) VALUES (?, 's', ?, 'l', ?, ?, ?, 't')",
    );
    answer.run('a1', 'i1', 'colour', '"red"', 'unmapped');
    answer.run('a2', 'i1', 'colour', '"blue"', 'unmapped');
    answer.run('a3', 'i1', 'age', '"x"', 'invalid');
    answer.run('a4', 'i1', 'course', '"python"', 'written');
    answer.run('a5', 'i2', 'colour', '"é"', 'unmapped');
    migrate(db);
    expect(
      db.prepare('SELECT integration_id, answer_key, answers, bytes FROM answers_kept ORDER BY 1, 2').all(),
    ).toEqual([
      { integration_id: 'i1', answer_key: 'age', answers: 1, bytes: 3 + 3 },
      { integration_id: 'i1', answer_key: 'colour', answers: 2, bytes: 6 + 5 + 6 + 6 },
      { integration_id: 'i2', answer_key: 'colour', answers: 1, bytes: 6 + 4 },
    ]);
  });

  it('marks the legacy leads whose person has no binding of their integration, from the backfill on (migration 24)', () => {
    const db = new Database(':memory:');
    db.pragma('foreign_keys = OFF'); // leads and bindings only: their persons do not matter here
    const version = migrations.find((m) => m.name === 'unlinked legacy leads marked, kept so by triggers')!.version;
    migrate(
      db,
      migrations.filter((m) => m.version < version),
    );
    const lead = db.prepare(
      "INSERT INTO leads (id, workspace_id, contact_id, integration_id, origin, first_name, created_at, updated_at) VALUES (?, 'w', ?, ?, ?, 'x', 't', 't')",
    );
    db.prepare(
      "INSERT INTO contact_bindings (integration_id, external_contact_id, contact_id, created_at) VALUES ('i1', 'tg:1', 'bound', 't')",
    ).run();
    lead.run('bound-legacy', 'bound', 'i1', 'legacy');
    lead.run('unbound-legacy', 'free', 'i1', 'legacy');
    lead.run('bound-elsewhere', 'bound', 'i2', 'legacy');
    lead.run('unbound-v1', 'free', 'i1', 'v1');
    migrate(db);
    const marked = () => db.prepare('SELECT id FROM leads WHERE unlinked_legacy = 1 ORDER BY id').all();
    expect(marked()).toEqual([{ id: 'bound-elsewhere' }, { id: 'unbound-legacy' }]);
    // From then on the triggers keep it: a binding made, a lead of a bound person, a binding removed.
    db.prepare(
      "INSERT INTO contact_bindings (integration_id, external_contact_id, contact_id, created_at) VALUES ('i1', 'tg:2', 'free', 't')",
    ).run();
    lead.run('later-legacy', 'bound', 'i1', 'legacy');
    expect(marked()).toEqual([{ id: 'bound-elsewhere' }]);
    db.prepare("DELETE FROM contact_bindings WHERE external_contact_id = 'tg:1'").run();
    expect(marked()).toEqual([{ id: 'bound-elsewhere' }, { id: 'bound-legacy' }, { id: 'later-legacy' }]);
  });

  it('keeps every key and usage count across the rebuild that admits test keys and their calls, and still refuses an unknown kind (migration 19)', () => {
    const db = new Database(':memory:');
    const version = migrations.find((m) => m.name === 'test keys and their calls counted apart')!.version;
    migrate(
      db,
      migrations.filter((m) => m.version < version),
    );
    db.prepare(
      "INSERT INTO api_keys VALUES ('k1', 'i1', 'v1', 'lgv1_abc', 'h1', 't1', 'ops', NULL), ('k2', 'i1', 'legacy', '', 'h2', 't2', 'ops', 't3')",
    ).run();
    db.prepare("INSERT INTO api_usage VALUES ('i1', 'v1', 'POST /x', '2026-11-26T10', 5, 't4', 4, 't5')").run();
    expect(() =>
      db.prepare("INSERT INTO api_keys VALUES ('k3', 'i1', 'test', 'lgtest_abc', 'h3', 't1', 'ops', NULL)").run(),
    ).toThrow(/CHECK/);
    migrate(db);
    expect(db.prepare('SELECT * FROM api_keys ORDER BY id').all()).toEqual([
      {
        id: 'k1',
        integration_id: 'i1',
        kind: 'v1',
        prefix: 'lgv1_abc',
        hash: 'h1',
        created_at: 't1',
        created_by: 'ops',
        revoked_at: null,
      },
      {
        id: 'k2',
        integration_id: 'i1',
        kind: 'legacy',
        prefix: '',
        hash: 'h2',
        created_at: 't2',
        created_by: 'ops',
        revoked_at: 't3',
      },
    ]);
    expect(db.prepare('SELECT * FROM api_usage').all()).toEqual([
      {
        integration_id: 'i1',
        interface: 'v1',
        route: 'POST /x',
        hour: '2026-11-26T10',
        calls: 5,
        last_seen: 't4',
        ok_calls: 4,
        last_ok: 't5',
      },
    ]);
    db.prepare("INSERT INTO api_keys VALUES ('k3', 'i1', 'test', 'lgtest_abc', 'h3', 't1', 'ops', NULL)").run();
    db.prepare("INSERT INTO api_usage VALUES ('i1', 'v1-test', 'POST /x', '2026-11-26T10', 1, 't4', 1, 't4')").run();
    expect(() =>
      db.prepare("INSERT INTO api_keys VALUES ('k4', 'i1', 'other', 'x', 'h4', 't1', 'ops', NULL)").run(),
    ).toThrow(/CHECK/);
    expect(() =>
      db.prepare("INSERT INTO api_keys VALUES ('k5', 'i1', 'v1', 'x', 'h1', 't1', 'ops', NULL)").run(),
    ).toThrow(/UNIQUE/);
    expect(
      db
        .prepare(
          "SELECT name FROM sqlite_master WHERE type = 'index' AND name IN ('api_keys_integration', 'api_usage_hour') ORDER BY name",
        )
        .pluck()
        .all(),
    ).toEqual(['api_keys_integration', 'api_usage_hour']);
  });

  it('indexes leads only by what is looked up: not by status or group, whose counts are kept apart (migration 15)', () => {
    const db = new Database(':memory:');
    migrate(db);
    const indexes = (
      db
        .prepare(
          "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'leads' AND sql IS NOT NULL ORDER BY name",
        )
        .all() as { name: string }[]
    ).map((r) => r.name);
    expect(indexes).toEqual(['leads_contact', 'leads_integration_page', 'leads_legacy', 'leads_unlinked_legacy']);
  });

  it('clears the clear-text prefixes of imported legacy keys, in the key list and the audit log (migration 7)', () => {
    const db = new Database(':memory:');
    migrate(
      db,
      migrations.filter((m) => m.version < 7),
    );
    const key = db.prepare(
      "INSERT INTO api_keys (id, integration_id, kind, prefix, hash, created_at, created_by) VALUES (?, 'i', ?, ?, ?, 't', 'ops')",
    );
    key.run('k1', 'legacy', 'k8char', 'h1');
    key.run('k2', 'legacy', 'sha256:d0648', 'h2');
    key.run('k3', 'v1', 'lgv1_abcdefg', 'h3');
    const audit = db.prepare(
      "INSERT INTO audit_log (id, integration_id, action, actor, details, at) VALUES (?, 'i', ?, 'ops', ?, 't')",
    );
    audit.run('a1', 'legacy_key_imported', JSON.stringify({ key_id: 'k1', prefix: 'k8char' }));
    audit.run('a2', 'legacy_key_imported', JSON.stringify({ key_id: 'k2', prefix: 'sha256:d0648' }));
    audit.run('a3', 'v1_key_issued', JSON.stringify({ key_id: 'k3', prefix: 'lgv1_abcdefg' }));
    migrate(db);
    expect(db.prepare('SELECT id, prefix FROM api_keys ORDER BY id').all()).toEqual([
      { id: 'k1', prefix: '' },
      { id: 'k2', prefix: 'sha256:d0648' },
      { id: 'k3', prefix: 'lgv1_abcdefg' },
    ]);
    const details = (db.prepare('SELECT details FROM audit_log ORDER BY id').all() as { details: string }[]).map(
      (r) => JSON.parse(r.details).prefix,
    );
    expect(details).toEqual(['', 'sha256:d0648', 'lgv1_abcdefg']);
  });
});
