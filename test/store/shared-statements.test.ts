// Every statement both engines share (src/store/statements/) is one both can take: SQLite prepares it
// as its engine does (src/store/sqlite/shared.ts) and PostgreSQL as its own (PREPARE), each on a
// migrated database, so a text only one dialect reads fails here, on the other, by name.
import Database from 'better-sqlite3';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate as migratePostgres } from '../../src/store/postgres/migrations.js';
import { createPool } from '../../src/store/postgres/pool.js';
import { migrate as migrateSqlite } from '../../src/store/sqlite/migrations.js';
import { prepareShared } from '../../src/store/sqlite/shared.js';
import { parameterCount, type SharedSql } from '../../src/store/statements/shared.js';
import { clusterOrSkip, freshDatabase, type TestPostgres } from '../support/postgres.js';

const folder = join(import.meta.dirname, '..', '..', 'src', 'store', 'statements');
const isShared = (value: unknown): value is SharedSql =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as SharedSql).name === 'string' &&
  typeof (value as SharedSql).text === 'string';

/** Every shared statement of every module in the folder: a new module is checked without being listed here. */
const shared: SharedSql[] = [];
for (const file of readdirSync(folder)
  .filter((f) => f.endsWith('.ts') && f !== 'shared.ts')
  .sort()) {
  const module = (await import(pathToFileURL(join(folder, file)).href)) as Record<string, unknown>;
  for (const group of Object.values(module))
    if (typeof group === 'object' && group !== null) shared.push(...Object.values(group).filter(isShared));
}

describe('the shared statements', () => {
  it('are there, each under a name of its own', () => {
    expect(shared.length).toBeGreaterThan(0);
    const names = shared.map((s) => s.name);
    expect(new Set(names).size).toBe(names.length);
  });

  it.for(shared)('$name numbers its parameters from 1 without a gap, and has no other placeholder', (s) => {
    const used = new Set([...s.text.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])));
    expect([...used].sort((a, b) => a - b)).toEqual(Array.from({ length: parameterCount(s.text) }, (_, i) => i + 1));
    expect(s.text).not.toMatch(/\?|[@:]\w|\$[^\d]/);
  });
});

describe('on sqlite', () => {
  const db = new Database(':memory:');
  migrateSqlite(db);
  afterAll(() => db.close());

  it.for(shared)('prepares $name', (s) => {
    expect(() => prepareShared(db, s)).not.toThrow();
  });

  it('binds a number written twice to one value, each number to its own, and refuses a call with too few or too many values', () => {
    const twice = prepareShared<{ a: string; b: string; c: string }>(db, {
      name: 'test.twice',
      text: 'SELECT $2 AS a, $1 AS b, $2 AS c',
    });
    expect(twice.get('one', 'two')).toEqual({ a: 'two', b: 'one', c: 'two' });
    expect(() => twice.get('one')).toThrow('test.twice takes 2 values, not 1');
    expect(() => twice.get('one', 'two', 'three')).toThrow('test.twice takes 2 values, not 3');
  });
});

describe('on postgres', () => {
  let cluster: TestPostgres | null = null;
  let pool: pg.Pool | null = null;
  beforeAll(async () => {
    cluster = await clusterOrSkip();
    if (!cluster) return;
    pool = createPool({ url: await freshDatabase(cluster.url), poolSize: 1 });
    await migratePostgres(pool);
  }, 60_000);
  afterAll(async () => {
    await pool?.end();
    await cluster?.stop();
  });

  it.for(shared)('prepares $name', async (s, context) => {
    if (!pool) return context.skip();
    const client = await pool.connect();
    try {
      await client.query(`PREPARE shared_check AS ${s.text}`);
      await client.query('DEALLOCATE shared_check');
    } catch (error) {
      // pg's error object prints without its message: say it.
      throw new Error(`PostgreSQL cannot prepare ${s.name}: ${(error as Error).message}`, { cause: error });
    } finally {
      client.release();
    }
  });
});
