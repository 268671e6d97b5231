// Reads that go along with a unit's carrying statement (src/store/postgres/sql.ts, `along` and
// `carry`): the ledger's look-ups and the kept counts ride on the holds' one statement as its columns.
// They answer what they answer alone, go alone when nothing carries them in their turn, and fail with
// the statement that carried them.
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../../src/app.js';
import { createUsageRecorder } from '../../../src/migration/usage.js';
import { createRulesHolder } from '../../../src/rules/loader.js';
import { openPostgresStore, type PostgresStore } from '../../../src/store/postgres/postgres-store.js';
import { inOrder, statement, writeBehind } from '../../../src/store/postgres/sql.js';
import { clusterOrSkip, freshDatabase, type TestPostgres } from '../../support/postgres.js';

const ADMIN_TOKEN = 'along-admin-token-0123456789abcdef';

let cluster: TestPostgres | null = null;
const stores: PostgresStore[] = [];
const pools: pg.Pool[] = [];
beforeAll(async () => void (cluster = await clusterOrSkip()), 60_000);
afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()));
  await Promise.all(pools.map((p) => p.end()));
  await cluster?.stop();
});

/** A unit on one connection of a pool of its own, as the store makes it, and the names of what it sent. */
async function unitOn(url: string) {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  pools.push(pool);
  const client = await pool.connect();
  const names: string[] = [];
  const ordered = inOrder({
    query: (config) => {
      names.push(config.name ?? config.text);
      return client.query(config);
    },
  });
  const sql = writeBehind(ordered);
  sql.soon!({ text: 'BEGIN' });
  return {
    sql,
    names,
    end: async () => {
      await sql.flush().catch(() => {});
      await ordered.end('ROLLBACK').catch(() => {});
      client.release();
    },
  };
}

const carried = statement<{ one: string }>('along.carried', 'SELECT $1::text AS one');
const numbers = statement<{ n: number; d: string; t: string }>(
  'along.numbers',
  'SELECT n, (n * 1.5)::numeric AS d, repeat($2, n) AS t FROM generate_series(1, $1::int) AS n ORDER BY n DESC',
);
const failing = statement<{ x: number }>('along.failing', 'SELECT 1 / ($1::int - 1) AS x');

describe('reads going along with a carrying statement on PostgreSQL', () => {
  it('ride as columns of the carrying statement, in order, and the carried row keeps only its own columns', async (context) => {
    if (!cluster) return context.skip();
    const unit = await unitOn(await freshDatabase(cluster.url));
    try {
      const first = numbers.rowsAlong(unit.sql, 3, 'a');
      const second = numbers.rowsAlong(unit.sql, 1, 'b');
      const row = await carried.carrying(unit.sql, 'x');
      expect(row).toEqual({ one: 'x' });
      // Numbers come as JSON gives them (numeric as a number); text, order and count as alone.
      expect(await first).toEqual([
        { n: 3, d: 4.5, t: 'aaa' },
        { n: 2, d: 3, t: 'aa' },
        { n: 1, d: 1.5, t: 'a' },
      ]);
      expect(await second).toEqual([{ n: 1, d: 1.5, t: 'b' }]);
      expect(unit.names).toEqual(['BEGIN', expect.stringMatching(/^along\.carried\+along\.[0-9a-f]{16}$/)]);
    } finally {
      await unit.end();
    }
  });

  it('go alone when nothing carries them in their turn, and a unit may await them first', async (context) => {
    if (!cluster) return context.skip();
    const unit = await unitOn(await freshDatabase(cluster.url));
    try {
      expect(await numbers.rowsAlong(unit.sql, 2, 'z')).toEqual([
        { n: 2, d: '3.0', t: 'zz' },
        { n: 1, d: '1.5', t: 'z' },
      ]);
      // A carrying statement with nothing waiting is itself alone.
      expect(await carried.carrying(unit.sql, 'y')).toEqual({ one: 'y' });
      expect(unit.names).toEqual(['BEGIN', 'along.numbers', 'along.carried']);
    } finally {
      await unit.end();
    }
  });

  it('go alone before a statement that does not carry them', async (context) => {
    if (!cluster) return context.skip();
    const unit = await unitOn(await freshDatabase(cluster.url));
    try {
      const along = numbers.rowsAlong(unit.sql, 1, 'q');
      expect((await carried.one(unit.sql, 'w'))?.one).toBe('w');
      expect(await along).toEqual([{ n: 1, d: '1.5', t: 'q' }]);
      expect(unit.names).toEqual(['BEGIN', 'along.numbers', 'along.carried']);
    } finally {
      await unit.end();
    }
  });

  it('fail with the statement that carried them', async (context) => {
    if (!cluster) return context.skip();
    const unit = await unitOn(await freshDatabase(cluster.url));
    try {
      const along = numbers.rowsAlong(unit.sql, 1, 'f');
      along.catch(() => {});
      await expect(failing.carrying(unit.sql, 1)).rejects.toThrow(/division by zero/);
      await expect(along).rejects.toThrow(/division by zero/);
    } finally {
      await unit.end();
    }
  });

  it("answer a recorded event's look-up beside the holds exactly as the look-up alone does", async (context) => {
    if (!cluster) return context.skip();
    const url = await freshDatabase(cluster.url);
    const sent: string[] = [];
    const store = await openPostgresStore({ url, poolSize: 2, onStatement: (name) => sent.push(name) });
    stores.push(store);
    const app = await buildApp(
      { adminToken: ADMIN_TOKEN },
      {
        store,
        usage: createUsageRecorder(store, 3_600_000),
        rules: createRulesHolder(join(import.meta.dirname, '..', '..', '..', 'rules')),
      },
    );
    try {
      const key = (
        await app.inject({
          method: 'POST',
          url: '/admin/v1/integrations/brightpath:telegram-bot/keys',
          headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        })
      ).json<{ key: string }>().key;
      const created = await app.inject({
        method: 'POST',
        url: '/api/integrations/v1/leads/',
        headers: { authorization: `Bearer ${key}` },
        payload: {
          event_id: 'along-1',
          external_contact_id: 'telegram:77',
          first_name: 'Aziza',
          answers: { goal: 'job', age: 30, laptop: 'ha' },
        },
      });
      expect(created.statusCode).toBe(201);
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      const integrationId = (
        await client.query<{ id: string }>("SELECT integration_id AS id FROM submissions WHERE event_id = 'along-1'")
      ).rows[0]!.id;
      await client.end();
      const alone = await store.readOne((r) => r.submissions.findWithLead(integrationId, 'leads', 'along-1'));
      expect(alone?.lead?.parts.fieldValues.length).toBeGreaterThan(1);
      sent.length = 0;
      const beside = await store.rehearse(async (tx) => {
        const [found, held] = await Promise.all([
          tx.submissions.findWithLead(integrationId, 'leads', 'along-1'),
          tx.holds.binding(integrationId, 'telegram:77', []),
        ]);
        return { found, held };
      });
      expect(beside.held.contact).not.toBeNull();
      expect(sent).toEqual(['BEGIN', expect.stringMatching(/^holds\.hold\+along\./), 'ROLLBACK']);
      expect(beside.found).toEqual(alone);
    } finally {
      await app.close();
      stores.length = 0;
    }
  });
});
