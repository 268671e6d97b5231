// The reads of unlinked legacy leads (the report's count and list, the 404 page's look-up by person id)
// go through the index of the mark the triggers keep, on each engine: what the database reads is the
// unlinked leads it answers, never the integration's linked legacy leads, however many. Checked on the
// engines' own plans of the very statements the repositories prepare, over a table where thousands of
// legacy leads are linked and three are not.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../../src/store/open-store.js';
import { openPostgresStore } from '../../../src/store/postgres/postgres-store.js';
import type { Store } from '../../../src/store/store.js';
import { personIdTemplate } from '../../../src/lead/external-id.js';
import * as sqliteStatements from '../../../src/store/sqlite/repos/person-id.js';
import * as postgresStatements from '../../../src/store/postgres/repos/person-id.js';
import { clusterOrSkip, freshDatabase, type TestPostgres } from '../../support/postgres.js';
import { aContact, aLead } from '../../support/records.js';

const LINKED = 2_000;
const TEMPLATE = personIdTemplate('telegram:{extra_data.telegram_id}')!;

/** LINKED legacy leads whose person is bound, three whose person is not, and a v1 lead. */
async function fill(store: Store): Promise<void> {
  await store.transact(async (tx) => {
    for (let i = 0; i < LINKED + 3; i++) {
      const contact = `c${i}`;
      await tx.contacts.insert(aContact(contact));
      if (i < LINKED) await tx.contacts.bind('int-1', `telegram:${i}`, contact, 't');
      const at = `2026-01-01T00:00:${String(i % 60).padStart(2, '0')}.${String(i).padStart(4, '0')}Z`;
      await tx.leads.insert(
        aLead(`l${i}`, {
          contactId: contact,
          origin: 'legacy',
          createdAt: at,
          updatedAt: at,
          extraData: { telegram_id: i },
        }),
      );
    }
  });
}

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

describe('on sqlite', () => {
  it('finding 4: the count, the list and the look-up by person id search the index of the mark and scan no legacy leads', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'unlinked-plan-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const store = await openStore({ engine: 'sqlite', path: join(dir, 'g.db'), synchronous: 'FULL' });
    await fill(store);
    expect(await store.snapshot((r) => r.leads.countUnlinkedLegacy('int-1', 100))).toBe(3);
    await store.close();
    const db = new Database(join(dir, 'g.db'));
    cleanups.push(() => void db.close());
    db.exec('ANALYZE');
    const { text, params } = sqliteStatements.unlinkedLegacyOfQuery(TEMPLATE);
    const plans = [
      db.prepare(`EXPLAIN QUERY PLAN ${sqliteStatements.UNLINKED_LEGACY.list}`).all('int-1', 100),
      db.prepare(`EXPLAIN QUERY PLAN ${sqliteStatements.UNLINKED_LEGACY.count}`).all('int-1', 100),
      db
        .prepare(`EXPLAIN QUERY PLAN ${text}`)
        .all({ ...params, integrationId: 'int-1', examined: 100, ids: '["telegram:2001"]' }),
    ].map((rows) => (rows as { detail: string }[]).map((r) => r.detail));
    for (const plan of plans) {
      expect(
        plan.some((d) => /^SEARCH leads USING (COVERING )?INDEX leads_unlinked_legacy/.test(d)),
        plan.join('\n'),
      ).toBe(true);
      expect(
        plan.filter((d) => /^SCAN leads\b/.test(d)),
        plan.join('\n'),
      ).toEqual([]);
    }
  });
});

describe('on postgres', () => {
  let cluster: TestPostgres | null = null;
  it('finding 4: the count, the list and the look-up by person id search the index of the mark and scan no legacy leads', async (context) => {
    cluster = await clusterOrSkip();
    if (!cluster) return context.skip();
    cleanups.push(() => cluster?.stop());
    const url = await freshDatabase(cluster.url);
    const store = await openPostgresStore({ url, poolSize: 2 });
    cleanups.push(() => store.close());
    await fill(store);
    expect(await store.snapshot((r) => r.leads.countUnlinkedLegacy('int-1', 100))).toBe(3);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    cleanups.push(() => client.end());
    await client.query('ANALYZE leads');
    const { text, values } = postgresStatements.unlinkedLegacyOfQuery(TEMPLATE);
    const statements: [string, unknown[]][] = [
      [postgresStatements.UNLINKED_LEGACY.list, ['int-1', 100]],
      [postgresStatements.UNLINKED_LEGACY.count, ['int-1', 100]],
      [text, ['int-1', ['telegram:2001'], 100, ...values]],
    ];
    for (const [i, [sql, params]] of statements.entries()) {
      await client.query(`PREPARE s${i} AS ${sql}`);
      // The plan a prepared statement runs with: the generic one, as the driver's named statements get.
      await client.query("SET plan_cache_mode = 'force_generic_plan'");
      const literal = params.map((p) =>
        Array.isArray(p)
          ? `ARRAY[${p.map((x) => `'${String(x)}'`).join(',')}]`
          : typeof p === 'number'
            ? String(p)
            : `'${String(p)}'`,
      );
      const plan = (
        await client.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) EXECUTE s${i}(${literal.join(', ')})`)
      ).rows[0]!['QUERY PLAN'];
      const nodes: { 'Node Type': string; 'Relation Name'?: string; 'Index Name'?: string }[] = [];
      const walk = (node: Record<string, unknown>) => {
        nodes.push(node as (typeof nodes)[number]);
        for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
      };
      walk((plan as { Plan: Record<string, unknown> }[])[0]!.Plan);
      const shown = JSON.stringify(nodes.map((n) => [n['Node Type'], n['Relation Name'], n['Index Name']]));
      expect(
        nodes.some((n) => n['Index Name'] === 'leads_unlinked_legacy'),
        shown,
      ).toBe(true);
      expect(
        nodes.filter((n) => n['Relation Name'] === 'leads' && n['Index Name'] !== 'leads_unlinked_legacy'),
        shown,
      ).toEqual([]);
    }
  });
});
