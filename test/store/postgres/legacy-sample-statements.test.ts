// A legacy call's sample for the porting guide costs the request no statement: it is redacted and held
// in memory, and written with the usage counters' flush (src/migration/usage.ts). Counted on PostgreSQL,
// where each statement is a round trip (the SQLite engine has no statement count to read).
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../../src/app.js';
import { createUsageRecorder } from '../../../src/migration/usage.js';
import { createRulesHolder } from '../../../src/rules/loader.js';
import { openPostgresStore, type PostgresStore } from '../../../src/store/postgres/postgres-store.js';
import { clusterOrSkip, freshDatabase, type TestPostgres } from '../../support/postgres.js';

const ADMIN_TOKEN = 'legacy-samples-admin-token-0123456789abcdef';
const LEGACY_KEY = 'legacy-samples-bot-key';
/** Not the request's own: keys and states remembered a second per store (src/store/hot-reads.ts). */
const notTheRequests = (name: string) => name.startsWith('keys.') || name === 'states.get';

let cluster: TestPostgres | null = null;
let store: PostgresStore | null = null;
const sent: string[] = [];
beforeAll(async () => void (cluster = await clusterOrSkip()), 60_000);
afterAll(async () => {
  await store?.close();
  await cluster?.stop();
});

describe('legacy samples on the hot path', () => {
  it('a legacy POST whose sample is taken sends the statements of one whose sample is not; the flush writes it', async (context) => {
    if (!cluster) return context.skip();
    store = await openPostgresStore({
      url: await freshDatabase(cluster.url),
      poolSize: 4,
      onStatement: (name) => sent.push(name),
    });
    const usage = createUsageRecorder(store, 3_600_000);
    const rules = createRulesHolder(join(import.meta.dirname, '..', '..', '..', 'rules'));
    const app = await buildApp({ adminToken: ADMIN_TOKEN }, { store, usage, rules });
    const imported = await app.inject({
      method: 'POST',
      url: '/admin/v1/integrations/brightpath:telegram-bot/keys/import',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { key: LEGACY_KEY },
    });
    expect(imported.statusCode).toBe(201);
    const post = async (n: number) => {
      sent.length = 0;
      const res = await app.inject({
        method: 'POST',
        url: '/api/bots/api/leads/',
        headers: { 'x-bot-api-key': LEGACY_KEY },
        payload: {
          first_name: `Person ${n}`,
          phone: `+99890555${String(n).padStart(4, '0')}`,
          extra_data: { telegram_id: 7000 + n, course: 'python' },
        },
      });
      expect(res.statusCode).toBe(201);
      return sent.filter((name) => !notTheRequests(name));
    };
    await post(0);
    await usage.flush();
    const sampled = await post(1); // the first since the flush: its sample is taken
    const unsampled = await post(2); // one is held already: none taken
    expect(sampled).toEqual(unsampled);
    expect(sampled.filter((name) => name.startsWith('states.'))).toEqual([]);
    sent.length = 0;
    await usage.flush();
    expect(sent).toContain('states.putSample');
    const kept = await store.snapshot((r) =>
      r.states.samples(rules.current().findIntegration('brightpath:telegram-bot')!.id),
    );
    expect(kept.map((s) => s.route)).toContain('POST /api/bots/api/leads/');
    expect(JSON.stringify(kept)).not.toMatch(/Person|7001|5550001/);
    await app.close(); // closes the store too
    store = null;
  });
});
