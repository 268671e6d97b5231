// v1's test mode: a test key runs the whole v1 path (validation, matching against the live data, the
// answers mapping, the conflict rule) and answers as a live call would, marked by a header, while
// nothing is kept: no lead, person, ledger entry, answer or field value (docs/api.md, "Test mode").
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { startGateway, type Gateway } from '../helper.js';

let gw: Gateway;
let liveKey: string;
let testKey: string;
let seq = 0;
const uniq = (prefix: string) => `${prefix}-${++seq}-${Math.random().toString(36).slice(2, 8)}`;
const phone = () => `+99891${String(1_000_000 + ++seq * 7919).slice(-7)}`;
const HANDLE = 'brightpath:telegram-bot';

const issueTestKey = async (handle: string) => {
  const res = await gw.admin('POST', `/admin/v1/integrations/${handle}/keys/test`);
  expect(res.statusCode).toBe(201);
  return res.json<{ id: string; key: string; kind: string; prefix: string; state: string }>();
};

const answersCall = (key: string, body: unknown) =>
  gw.app.inject({
    method: 'POST',
    url: '/api/integrations/v1/leads/answers/',
    headers: { authorization: `Bearer ${key}` },
    payload: body as object,
  });

/** Everything a call could keep, counted. */
const kept = async () => ({
  leads: await gw.inspect.leads.count(),
  contacts: await gw.inspect.contacts.count(),
  submissions: await gw.inspect.submissions.count(),
  answers: await gw.inspect.answers.count(),
  fieldValues: await gw.inspect.fieldValues.count(),
});

/** A lead object without what differs between two leads made alike: ids and times. */
function likeness(lead: Record<string, unknown>): unknown {
  return JSON.parse(JSON.stringify(lead), (key, value: unknown) =>
    key === 'id' || key.endsWith('_at') || key === 'contact_id' ? undefined : value,
  );
}

const isTestAnswer = (res: LightMyRequestResponse) => res.headers['lead-gateway-test-mode'] === 'true';

beforeAll(async () => {
  gw = await startGateway();
  liveKey = await gw.issueKey(HANDLE);
  const issued = await issueTestKey(HANDLE);
  testKey = issued.key;
});
afterAll(() => gw.close());

describe('test keys', () => {
  it('are issued through the admin API with their own prefix, listed, move no state, and stop when revoked or renewed', async () => {
    const handle = 'smile-dental:booking-form';
    const issued = await issueTestKey(handle);
    expect(issued.kind).toBe('test');
    expect(issued.key).toMatch(/^lgtest_[A-Za-z0-9_-]{32}$/);
    expect(issued.prefix).toBe(issued.key.slice(0, 12));
    // A test key is not the additional v1 key: the integration stays where it was.
    expect(issued.state).toBe('legacy');
    const listed = (await gw.admin('GET', `/admin/v1/integrations/${handle}/keys`)).json<{
      items: { id: string; kind: string; revoked_at: string | null }[];
    }>().items;
    expect(listed).toContainEqual(expect.objectContaining({ id: issued.id, kind: 'test', revoked_at: null }));
    const audit = (await gw.admin('GET', `/admin/v1/audit?integration=${handle}`)).json<{
      items: { action: string }[];
    }>().items;
    expect(audit.map((a) => a.action)).toContain('test_key_issued');

    const body = () => ({ event_id: uniq('e'), first_name: 'Nodira', phone: phone() });
    expect((await gw.submit(issued.key, body())).statusCode).toBe(201);
    // Not a key of the deprecated interface.
    expect(
      (await gw.app.inject({ method: 'GET', url: '/api/bots/api/boards/', headers: { 'x-bot-api-key': issued.key } }))
        .statusCode,
    ).toBe(401);

    expect((await gw.admin('POST', `/admin/v1/integrations/${handle}/keys/${issued.id}/revoke`, {})).statusCode).toBe(
      200,
    );
    expect((await gw.submit(issued.key, body())).statusCode).toBe(401);

    const second = await issueTestKey(handle);
    expect((await gw.admin('POST', `/admin/v1/integrations/${handle}/keys/renew`, {})).statusCode).toBe(201);
    expect((await gw.submit(second.key, body())).statusCode).toBe(401);
  });
});

describe('a test new lead', () => {
  it('answers 201 with the body a live call gives, marked by the header, and keeps nothing', async () => {
    const body = {
      event_id: uniq('e'),
      external_contact_id: uniq('tg'),
      first_name: 'Zarina',
      phone: phone(),
      notes: 'asked about evening groups',
      metadata: { source_key: 'ig_spring' },
      answers: { goal: 'Frontend job', age: '19', laptop: 'ha', course: 'python', unmapped_key: 'x' },
    };
    const before = await kept();
    const test = await gw.submit(testKey, body);
    expect(test.statusCode).toBe(201);
    expect(isTestAnswer(test)).toBe(true);
    const rehearsed = test.json();
    expect(rehearsed).toMatchObject({
      replayed: false,
      matched_existing: false,
      intake_outcome: 'created',
      deleted: false,
    });
    expect(rehearsed.answers.written.length).toBeGreaterThan(0);
    expect(await kept()).toEqual(before);

    // The same event_id again: never a replay, and (nothing kept) it stays free for the live call.
    const again = await gw.submit(testKey, body);
    expect(again.statusCode).toBe(201);
    expect(again.json()).toMatchObject({ replayed: false, intake_outcome: 'created' });
    expect(await kept()).toEqual(before);

    // The same body with the live key stores what the test call said it would.
    const live = await gw.submit(liveKey, body);
    expect(live.statusCode).toBe(201);
    expect(live.headers['lead-gateway-test-mode']).toBeUndefined();
    const stored = live.json();
    expect(Object.keys(stored).sort()).toEqual(Object.keys(rehearsed).sort());
    expect(stored.answers).toEqual(rehearsed.answers);
    expect(likeness(stored.lead)).toEqual(likeness(rehearsed.lead));
    expect(rehearsed.lead.stage).toEqual(expect.any(String));
    expect(rehearsed.lead.custom_field_values.length).toBeGreaterThan(0);
    expect(stored.lead).toMatchObject({ stage: rehearsed.lead.stage, tag_ids: rehearsed.lead.tag_ids });
    expect(likeness(stored.lead.custom_field_values)).toEqual(likeness(rehearsed.lead.custom_field_values));
    expect(await kept()).toMatchObject({
      leads: before.leads + 1,
      contacts: before.contacts + 1,
      submissions: before.submissions + 1,
    });
  });

  it('matches against the live data: a known person is attached, as a live call would, and the lead is left as it was', async () => {
    const person = { external_contact_id: uniq('tg'), first_name: 'Bekzod', phone: phone() };
    const first = await gw.submit(liveKey, { event_id: uniq('e'), ...person, answers: { goal: 'Frontend job' } });
    expect(first.statusCode).toBe(201);
    const before = await kept();
    const test = await gw.submit(testKey, {
      event_id: uniq('e'),
      ...person,
      notes: 'second inquiry',
      metadata: { source_key: 'ig_spring' },
    });
    expect(test.statusCode).toBe(200);
    expect(test.json()).toMatchObject({
      intake_outcome: 'attached',
      matched_existing: true,
      matched_by: 'external_contact_id',
      replayed: false,
    });
    expect(test.json().lead.id).toBe(first.json().lead.id);
    expect(await kept()).toEqual(before);
    const lead = await gw.inspect.leads.list({ id: first.json().lead.id }, ['extraData', 'updatedAt']);
    expect(lead).toEqual([{ extraData: null, updatedAt: first.json().lead.updated_at }]);
  });
});

describe('a test answers call', () => {
  it('is 404 for a person only a test lead "created"', async () => {
    const externalId = uniq('tg');
    expect(
      (
        await gw.submit(testKey, {
          event_id: uniq('e'),
          external_contact_id: externalId,
          first_name: 'Aziza',
          phone: phone(),
        })
      ).statusCode,
    ).toBe(201);
    const res = await answersCall(testKey, {
      event_id: uniq('a'),
      external_contact_id: externalId,
      answers: { goal: 'Frontend job' },
    });
    expect(res.statusCode).toBe(404);
    expect(isTestAnswer(res)).toBe(true);
    expect(res.json()).toMatchObject({ type: expect.stringContaining('not-found') });
  });

  it('answers for a real person as a live call would (the conflict rule included), writes nothing, and the live call then writes it', async () => {
    const externalId = uniq('tg');
    const created = await gw.submit(liveKey, {
      event_id: uniq('e'),
      external_contact_id: externalId,
      first_name: 'Dilshod',
      phone: phone(),
      answers: { goal: 'Frontend job' },
    });
    expect(created.statusCode).toBe(201);
    const leadId = created.json().lead.id as string;
    const values = () =>
      gw.inspect.fieldValues.list({ leadId }, ['fieldId', 'text', 'decimal', 'bool', 'optionIds', 'writtenByKind']);
    const before = { kept: await kept(), values: await values() };
    const body = {
      event_id: uniq('a'),
      external_contact_id: externalId,
      answers: { goal: 'Data analyst', age: '21', course: 'python', unmapped_key: 'y' },
    };

    const test = await answersCall(testKey, body);
    expect(test.statusCode).toBe(200);
    expect(isTestAnswer(test)).toBe(true);
    const rehearsed = test.json();
    expect(rehearsed).toMatchObject({ lead_id: leadId, replayed: false, deleted: false });
    expect(rehearsed.answers.written.length).toBeGreaterThan(0);
    expect(await kept()).toEqual(before.kept);
    expect(await values()).toEqual(before.values);
    // Sent again with the test key: still no replay.
    expect((await answersCall(testKey, body)).json()).toEqual({ ...rehearsed, submission_id: expect.any(String) });

    const live = await answersCall(liveKey, body);
    expect(live.statusCode).toBe(200);
    expect(live.headers['lead-gateway-test-mode']).toBeUndefined();
    expect(live.json().answers).toEqual(rehearsed.answers);
    expect(await values()).not.toEqual(before.values);
    // And the test key's call now meets what the live one wrote: the same values again are unchanged.
    const after = await answersCall(testKey, { ...body, event_id: uniq('a') });
    expect(after.json().answers.written).toEqual([]);
  });
});

describe('usage and readiness', () => {
  it('counts test calls apart, never as v1 traffic: the verdict stays as it was', async () => {
    const handle = 'brightpath:website-form';
    const key = (await issueTestKey(handle)).key;
    const res = await gw.submit(key, { event_id: uniq('e'), first_name: 'Malika', phone: phone() });
    expect(res.statusCode).toBe(201);
    expect((await gw.submit(key, { event_id: uniq('e'), first_name: 'M', stage: 'Won' })).statusCode).toBe(422);
    const report = (await gw.admin('GET', `/admin/v1/integrations/${handle}/report`)).json();
    expect(report.v1_test).toMatchObject({
      calls_24h: 2,
      calls_7d: 2,
      successful_7d: 1,
      last_success: expect.any(String),
    });
    expect(report.v1_test.routes).toEqual([
      expect.objectContaining({ route: 'POST /api/integrations/v1/leads/', calls_24h: 2 }),
    ]);
    expect(report.v1).toMatchObject({ calls_24h: 0, calls_7d: 0, last_seen: null, last_success: null });
    expect(report.keys).toMatchObject({ test: 1, v1: 0 });
    expect(report.readiness.verdict).toBe('not_ready');
    expect(report.readiness.reasons).toContain('the v1 interface has not been called yet');
  });
});

describe('quota', () => {
  it("is the integration's one: test calls use it up, and a live call then gets 429", async () => {
    const small = await startGateway({ rateLimitPerMinute: 3 });
    try {
      const handle = 'smile-dental:booking-form';
      const live = await small.issueKey(handle);
      const test = (await small.admin('POST', `/admin/v1/integrations/${handle}/keys/test`)).json<{ key: string }>()
        .key;
      const body = () => ({ event_id: uniq('q'), first_name: 'Kamola', phone: phone() });
      for (let i = 0; i < 3; i++) expect((await small.submit(test, body())).statusCode).toBe(201);
      const refusedTest = await small.submit(test, body());
      expect(refusedTest.statusCode).toBe(429);
      expect(refusedTest.headers['lead-gateway-test-mode']).toBe('true');
      const refusedLive = await small.submit(live, body());
      expect(refusedLive.statusCode).toBe(429);
      expect(refusedLive.headers['lead-gateway-test-mode']).toBeUndefined();
    } finally {
      await small.close();
    }
  });
});
