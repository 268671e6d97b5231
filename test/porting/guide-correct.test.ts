// The porting guide is correct, not just readable: a scripted legacy bot makes every kind of call for
// one person; the guide's v1 examples, their placeholders filled for a second person as the legend says
// and sent as they are, answer with a test key as a live call would and store nothing, then with the
// live v1 key leave that person's lead as the first one's (fields, stage, tags, and the JSON types of
// what the bot sent).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startGateway, type Gateway } from '../helper.js';
import { stableId } from '../../src/rules/ids.js';
import type { PortingGuide } from '../../src/porting/guide.js';

let gw: Gateway;
const KEY = 'brightpath-porting-legacy-key';
const HANDLE = 'brightpath:telegram-bot';

beforeAll(async () => {
  gw = await startGateway();
  gw.secrets.add(KEY);
  expect((await gw.admin('POST', `/admin/v1/integrations/${HANDLE}/keys/import`, { key: KEY })).statusCode).toBe(201);
});
afterAll(() => gw.close());

async function bot(method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', path: string, body?: unknown) {
  const res = await gw.app.inject({
    method,
    url: `/api/bots/api${path}`,
    headers: { 'x-bot-api-key': KEY },
    ...(body === undefined ? {} : { payload: body as object }),
  });
  return { status: res.statusCode, body: res.body ? res.json() : null };
}

/** The first person's own values: none of them may reach the guide. */
const FIRST = {
  first_name: 'Madina',
  last_name: 'Rahimova',
  phone: '+998 90 555 12 34',
  email: 'madina.r@example.com',
  notes: 'Prefers evening classes',
  telegram_id: 4242,
};

/**
 * What each placeholder becomes for the second person, as the text written in its place: the legend
 * says `<number>` and `<number-id>` are JSON numbers, written without quotes (the age the bot sent for
 * the first, and the person's id); the others stand inside a JSON string.
 */
const SECOND: Record<string, string> = {
  '<name>': 'Bobur',
  '<phone>': '+998 91 222 33 44',
  '<email>': 'bobur@example.com',
  '<text>': 'Asked about the schedule',
  '<id>': '9191',
  '<number-id>': '9191',
  '<source>': 'ref_jasur',
  '<number>': '21',
};

/** The body of an example's curl command (`-d '…'`), its placeholders filled in the text as the legend says, `<n>` by the request's own counter. */
function filled(curl: string, n: number): unknown {
  const quoted = /-d '((?:[^']|'\\'')*)'$/.exec(curl);
  if (!quoted) throw new Error(`no body in ${curl}`);
  const text = quoted[1]!
    .replaceAll(`'\\''`, "'")
    .replace(/<[a-z0-9-]+>/g, (p) => (p === '<n>' ? String(n) : (SECOND[p] ?? p)));
  return JSON.parse(text);
}

/** The JSON type of every value, by member and item: what a typed client reads back. */
const typesOf = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(typesOf)
    : value !== null && typeof value === 'object'
      ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, typesOf(v)]))
      : value === null
        ? 'null'
        : typeof value;

type LeadView = Record<string, unknown> & { tag_ids: string[]; custom_field_values: Record<string, unknown>[] };

/** What the integration and its answers decide about a lead, without the person's own details. */
const decided = (lead: LeadView) => ({
  stage: lead.stage,
  status: lead.status,
  group: lead.group,
  assigned_to: lead.assigned_to,
  invited_by: lead.invited_by,
  source: lead.source,
  tag_ids: [...lead.tag_ids].sort(),
  fields: lead.custom_field_values
    .map((v) => ({
      field: v.field,
      option: v.option,
      text_value: v.text_value,
      decimal_value: v.decimal_value,
      boolean_value: v.boolean_value,
      date_value: v.date_value,
      selected_options: v.selected_options,
    }))
    .sort((a, b) => String(a.field).localeCompare(String(b.field))),
});

describe('the porting guide of a scripted legacy bot', () => {
  let guide: PortingGuide;
  let firstLeadId: string;
  const stage = stableId('brightpath', 'stage', 'Admissions', 'New inquiry');

  it('the bot makes every kind of call for one person', async () => {
    const laptop = await bot('POST', '/tags/create/', { name: 'Laptop bor' });
    const video = await bot('POST', '/tags/create/', { name: "Video ko'rdi" });
    expect([laptop.status, video.status]).toEqual([201, 201]);
    const created = await bot('POST', '/leads/', {
      first_name: FIRST.first_name,
      last_name: FIRST.last_name,
      phone: FIRST.phone,
      email: FIRST.email,
      notes: FIRST.notes,
      stage: stableId('brightpath', 'stage', 'Admissions', 'Trial lesson'),
      tag_ids: [laptop.body.id],
      source: 'ref_jasur',
      extra_data: { telegram_id: FIRST.telegram_id, course: 'python', utm_campaign: 'Madina spring' },
      favourite_colour: 'green',
    });
    expect(created.status).toBe(201);
    firstLeadId = created.body.id;
    expect(
      (
        await bot('PATCH', `/leads/${firstLeadId}/`, {
          tag_ids: [...created.body.tag_ids, video.body.id],
          extra_data: { age: 21 },
        })
      ).status,
    ).toBe(200);
    expect((await bot('PUT', `/leads/${firstLeadId}/`, { extra_data: { course: 'frontend' } })).status).toBe(200);
    for (const path of [
      '/boards/',
      '/statuses/',
      '/groups/',
      '/tags/',
      '/info/',
      '/leads/',
      `/leads/${firstLeadId}/`,
      `/leads/${firstLeadId}/comments/`,
    ]) {
      expect((await bot('GET', path)).status).toBe(200);
    }
    expect((await bot('POST', `/leads/${firstLeadId}/comments/`, { text: 'Madina asked for a discount' })).status).toBe(
      201,
    );
    expect((await bot('POST', `/leads/${firstLeadId}/payments/`, { amount: '250000.50' })).status).toBe(201);
    // Moved to the stage it is in: the call is counted, and the lead's stage stays the one the settings give.
    expect((await bot('POST', `/leads/${firstLeadId}/move/`, { stage })).status).toBe(200);
    expect((await bot('DELETE', `/leads/${randomUUID()}/`)).status).toBe(404);
  });

  it('lists every route with its count, the calls the bot stops making, the ignored fields and the fix-by date', async () => {
    const res = await gw.admin('GET', `/admin/v1/integrations/${HANDLE}/porting-guide`);
    expect(res.statusCode).toBe(200);
    guide = res.json<PortingGuide>();
    expect(guide.fix_by).toBe('2027-03-01');
    expect(guide.person_id).toEqual({ rule: 'telegram:{extra_data.telegram_id}', v1: 'telegram:<id>' });
    const kinds = Object.fromEntries(guide.routes.map((r) => [r.route, [r.kind, r.calls_30d]]));
    expect(kinds).toMatchObject({
      'POST /api/bots/api/leads/': ['translated', 1],
      'PATCH /api/bots/api/leads/:id/': ['translated', 1],
      'PUT /api/bots/api/leads/:id/': ['translated', 1],
      'POST /api/bots/api/tags/create/': ['not_needed', 2],
      'GET /api/bots/api/boards/': ['not_needed', 1],
      'POST /api/bots/api/leads/:id/move/': ['not_available', 1],
      'POST /api/bots/api/leads/:id/comments/': ['not_available', 1],
      'POST /api/bots/api/leads/:id/payments/': ['not_available', 1],
      'DELETE /api/bots/api/leads/:id/': ['not_available', 1],
    });
    expect(guide.not_available.map((r) => r.route).sort()).toEqual([
      'DELETE /api/bots/api/leads/:id/',
      'POST /api/bots/api/leads/:id/comments/',
      'POST /api/bots/api/leads/:id/move/',
      'POST /api/bots/api/leads/:id/payments/',
    ]);
    expect(guide.not_needed).toContainEqual({ route: 'POST /api/bots/api/tags/create/', calls_30d: 2 });
    expect(guide.ignored_legacy_fields.map((f) => f.field).sort()).toEqual(['favourite_colour', 'stage']);
    // No value of the first person is in the guide, in any form. The phone's parts are looked for
    // with their neighbours: '555' alone is found in a millisecond of a timestamp (…:53.555Z) or an id.
    const text = res.body;
    for (const value of [
      FIRST.first_name,
      FIRST.last_name,
      FIRST.phone,
      '90 555',
      '555 12',
      '12 34',
      '998905551234',
      '905551234',
      FIRST.email,
      'evening',
      String(FIRST.telegram_id),
      'discount',
      '250000',
      firstLeadId,
    ])
      expect(text).not.toContain(value);
  });

  const examples = () =>
    ['POST /api/bots/api/leads/', 'PATCH /api/bots/api/leads/:id/', 'PUT /api/bots/api/leads/:id/'].map(
      (route) => guide.routes.find((r) => r.route === route)!.v1_example!,
    );
  const send = (key: string, example: NonNullable<PortingGuide['routes'][number]['v1_example']>, n: number) =>
    gw.app.inject({
      method: example.method,
      url: example.path,
      headers: { authorization: `Bearer ${key}` },
      payload: filled(example.curl, n) as object,
    });
  /** What the examples could store: leads, the ledger, persons, answers and field values. */
  const stored = async () => ({
    leads: await gw.inspect.leads.count(),
    submissions: await gw.inspect.submissions.count(),
    contacts: await gw.inspect.contacts.count(),
    answers: await gw.inspect.answers.count(),
    fieldValues: await gw.inspect.fieldValues.count(),
  });
  let testKey = '';
  let rehearsedLead: LeadView;

  it("the guide's v1 examples, filled for a second person and sent with a test key, answer as live calls would and store nothing", async () => {
    const issued = await gw.admin('POST', `/admin/v1/integrations/${HANDLE}/keys/test`);
    expect(issued.statusCode).toBe(201);
    testKey = issued.json<{ key: string }>().key;
    const before = await stored();
    const [lead, ...answers] = examples();
    const created = await send(testKey, lead!, 1);
    expect(created.statusCode, created.body).toBe(201);
    expect(created.headers['lead-gateway-test-mode']).toBe('true');
    expect(created.json()).toMatchObject({ replayed: false, matched_existing: false, intake_outcome: 'created' });
    rehearsedLead = created.json<{ lead: LeadView }>().lead;
    expect(rehearsedLead).toMatchObject({ first_name: 'Bobur', phone: '+998912223344' });
    // The person was not kept, so the answers calls find no one: what a live call answers for a person never sent.
    for (const [i, example] of answers.entries()) {
      const res = await send(testKey, example, i + 2);
      expect(res.statusCode, res.body).toBe(404);
      expect(res.headers['lead-gateway-test-mode']).toBe('true');
    }
    expect(await stored()).toEqual(before);
  });

  it("finding 8: the guide's v1 examples, filled for a second person as the legend says, give that person's lead the first one's fields, stage, tags and JSON types", async () => {
    const v1Key = await gw.issueKey(HANDLE);
    let secondLeadId = '';
    for (const [n, example] of examples().entries()) {
      const res = await send(v1Key, example, n + 1);
      expect(res.statusCode, res.body).toBeLessThan(300);
      expect(res.headers['lead-gateway-test-mode']).toBeUndefined();
      if (n === 0) {
        expect(res.json()).toMatchObject({ intake_outcome: 'created' });
        secondLeadId = res.json<{ lead: { id: string } }>().lead.id;
        // The lead the test key answered is the one the live key stores.
        const { id: _id, ...live } = res.json<{ lead: LeadView }>().lead;
        const { id: _rehearsedId, ...rehearsed } = rehearsedLead;
        expect(decided(live as LeadView)).toEqual(decided(rehearsed as LeadView));
      }
    }
    const first = (await gw.admin('GET', `/admin/v1/leads/${firstLeadId}`)).json<LeadView>();
    const second = (await gw.admin('GET', `/admin/v1/leads/${secondLeadId}`)).json<LeadView>();
    expect(second.id).not.toBe(first.id);
    expect(second).toMatchObject({ first_name: 'Bobur', phone: '+998912223344', email: 'bobur@example.com' });
    expect(decided(first).stage).toBe(stage);
    expect(decided(first).fields.length).toBeGreaterThanOrEqual(4);
    expect(decided(second)).toEqual(decided(first));
    // The legacy call's numbers (its telegram_id among them) are numbers in the v1 lead too, and the
    // age the PATCH sent as a number is a number in its answers call.
    expect(first.extra_data).toMatchObject({ telegram_id: FIRST.telegram_id });
    expect(typesOf(second.extra_data)).toEqual(typesOf(first.extra_data));
    expect(filled(examples()[1]!.curl, 1)).toMatchObject({ answers: { age: 21 } });

    // Now that the person is known, the answers examples sent with the test key answer as the live ones did, and store nothing.
    const before = await stored();
    for (const [i, example] of examples().slice(1).entries()) {
      const res = await send(testKey, example, i + 10);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['lead-gateway-test-mode']).toBe('true');
    }
    expect(await stored()).toEqual(before);
    expect(decided((await gw.admin('GET', `/admin/v1/leads/${secondLeadId}`)).json<LeadView>())).toEqual(
      decided(second),
    );
  });
});
