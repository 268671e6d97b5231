// The round trips a request makes to PostgreSQL (docs/architecture.md, "Round trips"): each statement is one (node-postgres
// does not pipeline), counted through the pool's onStatement. Upper bounds, a guard against a change
// that adds statements unnoticed; docs/architecture.md says how a unit's statements are batched.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../../src/app.js';
import { createUsageRecorder } from '../../../src/migration/usage.js';
import { createRulesHolder } from '../../../src/rules/loader.js';
import { openPostgresStore, type PostgresStore } from '../../../src/store/postgres/postgres-store.js';
import { clusterOrSkip, freshDatabase, type TestPostgres } from '../../support/postgres.js';

/** Statements per request, as reached: ledger look-up, BEGIN, person lock, match, the writes, the lead object, COMMIT. */
const NEW_LEAD = 7;
/** Ledger look-up, then the lead with its parts in one statement. */
const REPLAY = 2;
/** Ledger look-up, BEGIN, the binding, the latest lead locked, the fields' values, the writes, COMMIT. */
const ANSWERS = 7;
/**
 * A known person's new inquiry: as a new lead, plus the person's row lock, the latest lead locked, the
 * fields' values, and the writes sent in three statements (each read first sends what is held).
 */
const ATTACHED = 12;

/**
 * Not the request's own: its key and its integration's state are remembered a second per store
 * (src/store/hot-reads.ts), so a slow machine reads them again now and then. (The usage counters,
 * flushed in the background, are flushed here only at close: their units would fall into a count.)
 */
const notTheRequests = (name: string) => name.startsWith('keys.') || name.startsWith('states.');

const ADMIN_TOKEN = 'round-trips-admin-token-0123456789abcdef';

let cluster: TestPostgres | null = null;
let store: PostgresStore | null = null;
const sent: string[] = [];
beforeAll(async () => void (cluster = await clusterOrSkip()), 60_000);
afterAll(async () => {
  await store?.close();
  await cluster?.stop();
});

describe('round trips per request on PostgreSQL', () => {
  it('a new lead, its replay, an answers call and an attached inquiry stay within their statements', async (context) => {
    if (!cluster) return context.skip();
    store = await openPostgresStore({ url: await freshDatabase(cluster.url), poolSize: 4, onStatement: (name) => sent.push(name) });
    const usage = createUsageRecorder(store, 3_600_000);
    const app = await buildApp({ adminToken: ADMIN_TOKEN }, { store, usage, rules: createRulesHolder(join(import.meta.dirname, '..', '..', '..', 'rules')) });
    const issued = await app.inject({ method: 'POST', url: '/admin/v1/integrations/brightpath:telegram-bot/keys', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    const key = issued.json<{ key: string }>().key;
    const post = async (path: string, body: unknown) => {
      sent.length = 0;
      const res = await app.inject({ method: 'POST', url: `/api/integrations/v1/${path}`, headers: { authorization: `Bearer ${key}` }, payload: body as object });
      return { status: res.statusCode, replayed: res.json<{ replayed: boolean }>().replayed, statements: sent.filter((name) => !notTheRequests(name)) };
    };
    // The key's first use reads it and the integration's state; later requests find them remembered.
    await post('leads/', { event_id: 'warm', external_contact_id: 'telegram:0', first_name: 'Warm' });

    const lead = { event_id: 'e1', external_contact_id: 'telegram:1', first_name: 'Aziza', phone: '+998901234567', answers: { goal: 'job', age: 30 } };
    const created = await post('leads/', lead);
    expect(created).toMatchObject({ status: 201, replayed: false });
    expect(created.statements.length, created.statements.join('\n')).toBeLessThanOrEqual(NEW_LEAD);
    // The person's keys are locked before the person is looked for (docs/architecture.md, Concurrency).
    expect(created.statements.indexOf('locks.all')).toBeLessThan(created.statements.indexOf('contacts.match'));

    const replay = await post('leads/', lead);
    expect(replay).toMatchObject({ status: 200, replayed: true });
    expect(replay.statements.length, replay.statements.join('\n')).toBeLessThanOrEqual(REPLAY);

    const answers = await post('leads/answers/', { event_id: 'a1', external_contact_id: 'telegram:1', answers: { laptop: 'ha', goal: 'job' } });
    expect(answers).toMatchObject({ status: 200, replayed: false });
    expect(answers.statements.length, answers.statements.join('\n')).toBeLessThanOrEqual(ANSWERS);
    expect(answers.statements).toContain('leads.lockLatest');

    const attached = await post('leads/', { event_id: 'e2', first_name: 'Aziza', phone: '+998901234567', notes: 'again', answers: { age: 31 } });
    expect(attached).toMatchObject({ status: 200, replayed: false });
    expect(attached.statements.length, attached.statements.join('\n')).toBeLessThanOrEqual(ATTACHED);
    expect(attached.statements).toEqual(expect.arrayContaining(['locks.all', 'contacts.lock', 'leads.lockLatest']));
    // The app closes its store.
    await app.close();
    store = null;
  });
});
