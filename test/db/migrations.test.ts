// The migration runner: in order, once, each in its own transaction, the failing one named.
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { migrate, migrations, type Migration } from '../../src/db/migrations.js';

const tables = (db: Database.Database) =>
  (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]).map((r) => r.name);

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

  it('keeps versions unique and increasing (the list is append-only)', () => {
    const versions = migrations.map((m) => m.version);
    expect(versions).toEqual([...versions].sort((a, b) => a - b));
    expect(new Set(versions).size).toBe(versions.length);
  });
});
