// The events a gateway remembers (src/idempotency/known-events.ts) are a hint for finding a resend
// fast, never the verdict: a replay is answered the same by a gateway that never saw the event, and
// by one whose memory dropped it past its cap or its age.
import { expect, it } from 'vitest';
import { onEachEngineTwice, type TwinGateways } from '../support/twin-gateways.js';
import {
  knownEventCount,
  limitKnownEvents,
  rememberEvent,
  remembersEvent,
} from '../../src/idempotency/known-events.js';
import type { Store } from '../../src/store/store.js';

const TELEGRAM = 'brightpath:telegram-bot';

async function keyOf(t: TwinGateways): Promise<string> {
  const res = await t.admin(0, 'POST', `/admin/v1/integrations/${TELEGRAM}/keys`);
  expect(res.statusCode).toBe(201);
  return res.json<{ key: string }>().key;
}

/** What a replay answers as first recorded (the lead object is the lead as it is now: its counts move). */
const recorded = (res: { json<T>(): T }) => {
  const { contact_id, submission_id, intake_outcome, matched_by, answers, lead } = res.json<
    { lead: { id: string } } & Record<string, unknown>
  >();
  return { contact_id, submission_id, intake_outcome, matched_by, answers, lead: { id: lead.id } };
};

const post = (t: TwinGateways, gateway: number, key: string, path: 'leads/' | 'leads/answers/', body: unknown) =>
  t.send(gateway, 'POST', `/api/integrations/v1/${path}`, { authorization: `Bearer ${key}` }, body);

onEachEngineTwice((engine, twins) => {
  it('a replay on a gateway that never saw the event answers as the gateway that recorded it, and a 409 likewise', async () => {
    const t = twins();
    if (!t) return;
    const key = await keyOf(t);
    const lead = {
      event_id: `${engine}-seen-1`,
      external_contact_id: `tg:${engine}:seen`,
      first_name: 'Dilnoza',
      phone: '+998901110001',
      answers: { goal: 'job' },
    };
    const first = await post(t, 0, key, 'leads/', lead);
    expect(first.statusCode).toBe(201);
    const answers = { event_id: `${engine}-seen-a1`, external_contact_id: `tg:${engine}:seen`, answers: { age: 27 } };
    expect((await post(t, 0, key, 'leads/answers/', answers)).statusCode).toBe(200);

    const here = await post(t, 0, key, 'leads/', lead);
    const there = await post(t, 1, key, 'leads/', lead);
    expect(here.statusCode).toBe(200);
    expect(there.statusCode).toBe(200);
    expect(there.json()).toMatchObject({ replayed: true, intake_outcome: 'created' });
    expect(there.body).toBe(here.body);
    const answersHere = await post(t, 0, key, 'leads/answers/', answers);
    const answersThere = await post(t, 1, key, 'leads/answers/', answers);
    expect(answersThere.statusCode).toBe(200);
    expect(answersThere.json()).toMatchObject({ replayed: true });
    expect(answersThere.body).toBe(answersHere.body);

    // Other data under the event_id, first seen by the second gateway: the 409 names the path, nothing is written.
    const conflict = await post(t, 1, key, 'leads/', { ...lead, event_id: `${engine}-seen-1`, first_name: 'Other' });
    expect(conflict.statusCode).toBe(409);
    expect(conflict.json()).toMatchObject({ code: 'event-id-conflict', paths: ['/first_name'] });
    expect(await t.inspect.leads.count({ contactId: first.json<{ contact_id: string }>().contact_id })).toBe(1);
  });

  it('a 409 first met by a gateway that never saw the event is decided from the ledger, and writes nothing', async () => {
    const t = twins();
    if (!t) return;
    const key = await keyOf(t);
    const lead = {
      event_id: `${engine}-unseen-1`,
      external_contact_id: `tg:${engine}:unseen`,
      first_name: 'Aziza',
      phone: '+998901110002',
    };
    const first = await post(t, 0, key, 'leads/', lead);
    expect(first.statusCode).toBe(201);
    // Whatever the second gateway remembers from earlier tests, it has not met this event.
    limitKnownEvents(t.stores[1], { max: 100, ttlMs: 60_000 });
    // Other data under the event_id, and a person of its own: nothing of it may be written.
    const conflict = await post(t, 1, key, 'leads/', {
      ...lead,
      external_contact_id: `tg:${engine}:unseen-other`,
      phone: '+998901110003',
    });
    expect(conflict.statusCode).toBe(409);
    expect(conflict.json()).toMatchObject({ code: 'event-id-conflict', paths: ['/external_contact_id', '/phone'] });
    expect(await t.inspect.contacts.count({ phone: '+998901110003' })).toBe(0);
    expect(await t.inspect.leads.count({ contactId: first.json<{ contact_id: string }>().contact_id })).toBe(1);
    // The same body, on the gateway that never saw it: the recorded answer.
    const replayed = await post(t, 1, key, 'leads/', lead);
    expect(replayed.statusCode).toBe(200);
    expect(replayed.json()).toMatchObject({ ...recorded(first), replayed: true });
  });

  it('answers a resend it never saw while a unit of its own is still open: the resend waits for no write', async () => {
    const t = twins();
    if (!t) return;
    const key = await keyOf(t);
    const lead = { event_id: `${engine}-held-1`, external_contact_id: `tg:${engine}:held`, first_name: 'Held' };
    const first = await post(t, 0, key, 'leads/', lead);
    expect(first.statusCode).toBe(201);
    limitKnownEvents(t.stores[1], { max: 100, ttlMs: 60_000 });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    // A unit that holds the second gateway's writer (SQLite) or one of its connections (PostgreSQL).
    const held = t.stores[1].transact(() => gate);
    try {
      const resend = post(t, 1, key, 'leads/', lead);
      const waited = await Promise.race([
        resend,
        new Promise<'still waiting'>((resolve) => setTimeout(() => resolve('still waiting'), 5_000)),
      ]);
      expect(waited).not.toBe('still waiting');
      const replayed = await resend;
      expect(replayed.statusCode).toBe(200);
      expect(replayed.json()).toMatchObject({ ...recorded(first), replayed: true });
    } finally {
      release();
      await held;
    }
  });

  it('remembers no event it refused or only rehearsed in test mode', async () => {
    const t = twins();
    if (!t) return;
    const key = await keyOf(t);
    const before = knownEventCount(t.stores[0]);
    const refused = await post(t, 0, key, 'leads/answers/', {
      event_id: `${engine}-refused-1`,
      external_contact_id: `tg:${engine}:nobody`,
      answers: { age: 30 },
    });
    expect(refused.statusCode).toBe(404);
    const issued = await t.admin(0, 'POST', `/admin/v1/integrations/${TELEGRAM}/keys/test`);
    expect(issued.statusCode).toBe(201);
    const testKey = issued.json<{ key: string }>().key;
    const rehearsed = await post(t, 0, testKey, 'leads/', {
      event_id: `${engine}-rehearsed-1`,
      external_contact_id: `tg:${engine}:rehearsed`,
      first_name: 'Test',
    });
    expect(rehearsed.statusCode).toBe(201);
    expect(rehearsed.headers['lead-gateway-test-mode']).toBeDefined();
    expect(knownEventCount(t.stores[0])).toBe(before);
    // The event_ids stay free: the live calls under them are first events.
    const live = await post(t, 0, key, 'leads/', {
      event_id: `${engine}-rehearsed-1`,
      external_contact_id: `tg:${engine}:rehearsed`,
      first_name: 'Test',
    });
    expect(live.statusCode).toBe(201);
    // Remembered where the memory is read (PostgreSQL); SQLite looks every event up and keeps none.
    expect(knownEventCount(t.stores[0])).toBe(engine === 'postgres' ? before + 1 : 0);
  });

  it('a memory past its cap drops its oldest events, and a replay of one dropped is still answered as recorded', async () => {
    const t = twins();
    if (!t) return;
    const key = await keyOf(t);
    limitKnownEvents(t.stores[0], { max: 2, ttlMs: 60_000 });
    const bodies = [1, 2, 3, 4].map((n) => ({
      event_id: `${engine}-cap-${n}`,
      external_contact_id: `tg:${engine}:cap:${n}`,
      first_name: `Cap${n}`,
    }));
    const created = [];
    for (const body of bodies) created.push(await post(t, 0, key, 'leads/', body));
    expect(created.map((r) => r.statusCode)).toEqual([201, 201, 201, 201]);
    expect(knownEventCount(t.stores[0])).toBe(engine === 'postgres' ? 2 : 0);

    const replayed = await post(t, 0, key, 'leads/', bodies[0]);
    expect(replayed.statusCode).toBe(200);
    expect(replayed.json()).toMatchObject({ ...recorded(created[0]!), replayed: true });
    // Replayed, it is remembered again, and the cap still holds.
    expect(knownEventCount(t.stores[0])).toBe(engine === 'postgres' ? 2 : 0);
  });

  it('an event remembered past its age is forgotten, and its replay is still answered as recorded', async () => {
    const t = twins();
    if (!t) return;
    const key = await keyOf(t);
    limitKnownEvents(t.stores[0], { max: 100, ttlMs: 0 });
    const body = { event_id: `${engine}-age-1`, external_contact_id: `tg:${engine}:age`, first_name: 'Age' };
    const first = await post(t, 0, key, 'leads/', body);
    expect(first.statusCode).toBe(201);
    const replayed = await post(t, 0, key, 'leads/', body);
    expect(replayed.statusCode).toBe(200);
    expect(replayed.json()).toMatchObject({ ...recorded(first), replayed: true });
  });
});

it('the memory keeps the newest events up to its cap, and forgets an event past its age when asked', () => {
  const store = {} as Store;
  limitKnownEvents(store, { max: 3, ttlMs: 1_000 });
  for (const event of ['a', 'b', 'c', 'd']) rememberEvent(store, event, 0);
  expect(['a', 'b', 'c', 'd'].map((event) => remembersEvent(store, event, 500))).toEqual([false, true, true, true]);
  // Remembered again, `b` is the newest: `c` is the oldest now.
  rememberEvent(store, 'b', 600);
  rememberEvent(store, 'e', 600);
  expect(['b', 'c', 'd', 'e'].map((event) => remembersEvent(store, event, 700))).toEqual([true, false, true, true]);
  expect(remembersEvent(store, 'd', 1_000)).toBe(false);
  expect(knownEventCount(store)).toBe(2);
});
