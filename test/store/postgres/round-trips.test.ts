// The round trips a request makes to PostgreSQL: the times it waits for the server before it can send
// more, counted through the pool's onRoundTrip (a statement sent while none of its connection's
// statements is in flight) and read back from /metrics. Statements pipelined behind one in flight ride
// on its trip; docs/architecture.md says how a unit is sent. The statement counts are a looser guard
// against a change that adds statements unnoticed.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../../src/app.js';
import { KNOWN_EVENTS_MAX, KNOWN_EVENTS_TTL_MS, limitKnownEvents } from '../../../src/idempotency/known-events.js';
import { createUsageRecorder } from '../../../src/migration/usage.js';
import { createRulesHolder } from '../../../src/rules/loader.js';
import { openPostgresStore, type PostgresStore } from '../../../src/store/postgres/postgres-store.js';
import { clusterOrSkip, freshDatabase, type TestPostgres } from '../../support/postgres.js';

/**
 * Round trips (bench/results/LOG.md, "One unit, two round trips"): the unit's first statements (BEGIN,
 * and the holds with the ledger's look-up going along: the person locks, the match), then its writes,
 * the lead object and COMMIT (pipelined).
 */
const NEW_LEAD = 2;
/** A replay of an event this process recorded or replayed: the ledger row with the lead and its parts, one statement. */
const REPLAY = 1;
/**
 * A replay of an event this process does not remember (another replica recorded it, or a restart came
 * between): the unit's first trip finds it beside the lock and the match, then its ROLLBACK.
 */
const UNKNOWN_REPLAY = 2;
const UNKNOWN_REPLAY_STATEMENTS = 3;
/** BEGIN, the binding with the latest lead locked and the fields' values with the look-up along (one statement: repos/holds.ts); the writes and COMMIT. */
const ANSWERS = 2;
/** A known person's inquiry: as a new lead; the person's row lock, its latest lead's and the fields' values go out with the match. */
const ATTACHED = 2;
/** As attached, without answers: no read of the fields' values. */
const REACTIVATED = 2;
/** As a new lead: the previous day's event (src/legacy/service.ts, legacyEvent) is looked for beside the request's own, along with the holds. */
const LEGACY_POST = 2;
/**
 * Statements, at most (a pipelined statement costs the server a message and a plan, not a wait): BEGIN,
 * the holds (the person keys' locks, the match, the row locks and the values: one statement,
 * repos/holds.ts, the ledger's look-ups and the kept counts going along as its columns: sql.ts,
 * `along`), the writes, the lead object, COMMIT; answers have no lead object.
 */
const NEW_LEAD_STATEMENTS = 5;
const ANSWERS_STATEMENTS = 4;
const ATTACHED_STATEMENTS = 5;
const LEGACY_POST_STATEMENTS = 5;
/** The holds, with what went along (the ledger's look-ups, the kept counts): one statement. */
const isHolds = (name: string) => name === 'holds.hold' || name.startsWith('holds.hold+along.');

/**
 * Not the request's own: its key, its integration's state and (for a legacy call) its stored brownout
 * windows are remembered a second per store (src/store/hot-reads.ts), so a slow machine reads them
 * again now and then; the scheduled switch-offs
 * are looked for every second in the background (src/migration/schedule.ts), and may fall into a
 * count. (The usage counters, flushed in the background, are flushed here only at close: their units
 * would fall into a count.)
 */
const notTheRequests = (name: string) =>
  name.startsWith('keys.') ||
  name.startsWith('states.') ||
  name.startsWith('brownouts.') ||
  name.startsWith('schedules.');

const ADMIN_TOKEN = 'round-trips-admin-token-0123456789abcdef';
const LEGACY_KEY = 'round-trips-legacy-key-0123456789abcdef';

let cluster: TestPostgres | null = null;
let store: PostgresStore | null = null;
const sent: string[] = [];
const trips: string[] = [];
beforeAll(async () => void (cluster = await clusterOrSkip()), 60_000);
afterAll(async () => {
  await store?.close();
  await cluster?.stop();
});

describe('round trips per request on PostgreSQL', () => {
  it('a new lead (created, attached, reactivated), its replay, an answers call and a legacy POST stay within their round trips', async (context) => {
    if (!cluster) return context.skip();
    store = await openPostgresStore({
      url: await freshDatabase(cluster.url),
      poolSize: 4,
      onStatement: (name) => sent.push(name),
      onRoundTrip: (name) => trips.push(name),
    });
    const usage = createUsageRecorder(store, 3_600_000);
    const app = await buildApp(
      { adminToken: ADMIN_TOKEN },
      { store, usage, rules: createRulesHolder(join(import.meta.dirname, '..', '..', '..', 'rules')) },
    );
    const admin = (method: 'POST', url: string, payload?: object) =>
      app.inject({ method, url, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, ...(payload ? { payload } : {}) });
    await admin('POST', '/admin/v1/integrations/brightpath:telegram-bot/keys/import', { key: LEGACY_KEY });
    const key = (await admin('POST', '/admin/v1/integrations/brightpath:telegram-bot/keys')).json<{ key: string }>()
      .key;
    const measured = async (send: () => PromiseLike<{ statusCode: number; json<T>(): T }>) => {
      sent.length = 0;
      trips.length = 0;
      const res = await send();
      return {
        status: res.statusCode,
        body: res.json<{ replayed?: boolean; lead: { id: string } }>(),
        statements: sent.filter((name) => !notTheRequests(name)),
        trips: trips.filter((name) => !notTheRequests(name)),
      };
    };
    const post = (path: string, body: object) =>
      measured(() =>
        app.inject({
          method: 'POST',
          url: `/api/integrations/v1/${path}`,
          headers: { authorization: `Bearer ${key}` },
          payload: body,
        }),
      );
    const within = (request: { statements: string[]; trips: string[] }, most: number, statements: number) => {
      expect(
        request.trips.length,
        `round trips started by: ${request.trips.join(', ')}; statements: ${request.statements.join(', ')}`,
      ).toBeLessThanOrEqual(most);
      expect(request.statements.length, request.statements.join('\n')).toBeLessThanOrEqual(statements);
    };
    // The key's first use reads it and the integration's state; later requests find them remembered.
    await post('leads/', { event_id: 'warm', external_contact_id: 'telegram:0', first_name: 'Warm' });
    const before = Number(
      /^lead_gateway_postgres_round_trips_total (\d+)$/m.exec(
        (await app.inject({ method: 'GET', url: '/metrics' })).body,
      )?.[1],
    );

    const lead = {
      event_id: 'e1',
      external_contact_id: 'telegram:1',
      first_name: 'Aziza',
      phone: '+998901234567',
      answers: { goal: 'job', age: 30 },
    };
    const created = await post('leads/', lead);
    expect(created).toMatchObject({ status: 201, body: { replayed: false, intake_outcome: 'created' } });
    within(created, NEW_LEAD, NEW_LEAD_STATEMENTS);
    // The person's keys are locked before the person is looked for, inside the holds' one statement
    // (docs/architecture.md, Concurrency): no lock of its own.
    expect(created.statements.filter(isHolds)).toHaveLength(1);
    expect(created.statements).not.toContain('submissions.findWithLead');
    expect(created.statements).not.toContain('locks.all');

    // The counter /metrics shows moved by the request's round trips (and by the scrape's own reads: the
    // rules the replicas run, read on the database).
    const after = Number(
      /^lead_gateway_postgres_round_trips_total (\d+)$/m.exec(
        (await app.inject({ method: 'GET', url: '/metrics' })).body,
      )?.[1],
    );
    expect(after - before).toBeGreaterThanOrEqual(created.trips.length);

    const replay = await post('leads/', lead);
    expect(replay).toMatchObject({ status: 200, body: { replayed: true } });
    within(replay, REPLAY, REPLAY);
    expect(replay.statements).toEqual(['submissions.findWithLead']);

    // As on a replica that never saw the event: the same answer, from inside a unit rolled back.
    limitKnownEvents(store, { max: KNOWN_EVENTS_MAX, ttlMs: KNOWN_EVENTS_TTL_MS });
    const unknownReplay = await post('leads/', lead);
    expect(unknownReplay).toMatchObject({ status: 200, body: replay.body });
    within(unknownReplay, UNKNOWN_REPLAY, UNKNOWN_REPLAY_STATEMENTS);
    expect(unknownReplay.statements.at(-1)).toBe('ROLLBACK');

    const answers = await post('leads/answers/', {
      event_id: 'a1',
      external_contact_id: 'telegram:1',
      answers: { laptop: 'ha', goal: 'job' },
    });
    expect(answers).toMatchObject({ status: 200, body: { replayed: false } });
    within(answers, ANSWERS, ANSWERS_STATEMENTS);
    expect(answers.statements.filter(isHolds)).toHaveLength(1);
    // Answers no field takes (an unknown key, a number that is not one): their kept counts go along with the holds too.
    const unkept = await post('leads/answers/', {
      event_id: 'a2',
      external_contact_id: 'telegram:1',
      answers: { favourite_colour: 'blue', age: 'thirty', goal: 'job' },
    });
    expect(unkept).toMatchObject({
      status: 200,
      body: { replayed: false, answers: { unmapped: ['favourite_colour'], invalid: [{ key: 'age' }] } },
    });
    within(unkept, ANSWERS, ANSWERS_STATEMENTS);
    expect(unkept.statements).not.toContain('answers.kept');

    const attached = await post('leads/', {
      event_id: 'e2',
      first_name: 'Aziza',
      phone: '+998901234567',
      notes: 'again',
      answers: { age: 31 },
    });
    expect(attached).toMatchObject({ status: 200, body: { replayed: false, intake_outcome: 'attached' } });
    within(attached, ATTACHED, ATTACHED_STATEMENTS);
    expect(attached.statements[0]).toBe('BEGIN');
    expect(isHolds(attached.statements[1]!)).toBe(true);

    const closed = await admin('POST', `/admin/v1/leads/${created.body.lead.id}/close`, {
      outcome: 'lost',
      reason: 'No answer',
      closed_by: 'jasur',
    });
    expect(closed.statusCode).toBe(200);
    const reactivated = await post('leads/', {
      event_id: 'e3',
      external_contact_id: 'telegram:1',
      first_name: 'Aziza',
    });
    expect(reactivated).toMatchObject({ status: 200, body: { replayed: false, intake_outcome: 'reactivated' } });
    within(reactivated, REACTIVATED, ATTACHED_STATEMENTS);

    const legacy = await measured(() =>
      app.inject({
        method: 'POST',
        url: '/api/bots/api/leads/',
        headers: { 'x-bot-api-key': LEGACY_KEY },
        payload: { first_name: 'Nodira', phone: '+998905551122' },
      }),
    );
    expect(legacy.status).toBe(201);
    within(legacy, LEGACY_POST, LEGACY_POST_STATEMENTS);
    // The app closes its store.
    await app.close();
    store = null;
  });
});
