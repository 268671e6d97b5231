// Every member name the porting guide shows, in any section, passes the samples' redaction: a bot that
// keys its data by the person (their name, handle, phone or e-mail) shows `<member-N>`, in its samples,
// its v1 examples and its ignored fields alike, rows stored before the rule included.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../helper.js';
import type { PortingGuide } from '../../src/porting/guide.js';

let gw: Gateway;
const KEY = 'member-names-legacy-key';
const HANDLE = 'brightpath:telegram-bot';
/** Member names that are a person's, and the parts of them no section may show. */
const PEOPLE = ['Aziza', 'aziza_rahimova', 'jasur_k', '+998901234567', 'dilnoza.k@example.com'];
const PARTS = ['Aziza', 'aziza', 'rahimova', 'jasur', '998901234567', 'dilnoza', 'example.com'];

beforeAll(async () => {
  gw = await startGateway();
  gw.secrets.add(KEY);
  expect((await gw.admin('POST', `/admin/v1/integrations/${HANDLE}/keys/import`, { key: KEY })).statusCode).toBe(201);
});
afterAll(() => gw.close());

const bot = (method: 'POST' | 'PATCH', path: string, body: unknown) =>
  gw.app.inject({ method, url: `/api/bots/api${path}`, headers: { 'x-bot-api-key': KEY }, payload: body as object });

describe('finding 3: member names in the porting guide', () => {
  it("shows a person's name, handle, phone or e-mail as <member-N> in every section, and a field's name as sent", async () => {
    const byPerson = Object.fromEntries(PEOPLE.map((p) => [p, 'x']));
    const created = await bot('POST', '/leads/', {
      first_name: 'Aziza',
      stage: 'x',
      favourite_colour: 'teal',
      ...byPerson,
      extra_data: { telegram_id: 7070, course: 'python', utm_source: 'ads', ...byPerson },
    });
    expect(created.statusCode).toBe(201);
    expect(
      (
        await bot('PATCH', `/leads/${created.json<{ id: string }>().id}/`, {
          extra_data: { age: 30, ...byPerson },
          ...byPerson,
        })
      ).statusCode,
    ).toBe(200);
    // A sample kept under the laxer rule of before, the names as sent.
    const integration = gw.rules.current().findIntegration(HANDLE)!;
    const at = new Date().toISOString();
    await gw.store.transact(async (tx) => {
      await tx.states.addUsage([
        {
          integrationId: integration.id,
          interface: 'legacy',
          route: 'PUT /api/bots/api/leads/:id/',
          hour: at.slice(0, 13),
          calls: 1,
          lastSeen: at,
          okCalls: 1,
          lastOk: at,
        },
      ]);
      const names = Object.fromEntries(PEOPLE.map((p) => [p, '<text>']));
      await tx.states.putSamples([
        {
          integrationId: integration.id,
          route: 'PUT /api/bots/api/leads/:id/',
          at,
          sample: {
            method: 'PUT',
            path: '/api/bots/api/leads/<id>/',
            query: names,
            body: { ...names, extra_data: { age: '<number>', ...names } },
            status: 200,
            truncated: false,
          },
        },
      ]);
    });

    const json = await gw.admin('GET', `/admin/v1/integrations/${HANDLE}/porting-guide`);
    const markdown = await gw.admin('GET', `/admin/v1/integrations/${HANDLE}/porting-guide?format=markdown`);
    for (const text of [json.body, markdown.body]) for (const part of PARTS) expect(text, part).not.toContain(part);

    const guide = json.json<PortingGuide>();
    const fields = guide.ignored_legacy_fields.map((f) => f.field);
    expect(fields.filter((f) => /^<member-\d+>$/.test(f))).toHaveLength(PEOPLE.length);
    expect(fields.filter((f) => !/^<member-\d+>$/.test(f)).sort()).toEqual(['favourite_colour', 'stage']);
    const lead = guide.routes.find((r) => r.route === 'POST /api/bots/api/leads/')!;
    expect(Object.keys((lead.sample!.call.body as { extra_data: object }).extra_data)).toEqual([
      'telegram_id',
      'course',
      'utm_source',
      ...PEOPLE.map((_, i) => `<member-${i + 4}>`),
    ]);
    expect(Object.keys((lead.v1_example!.body as { metadata: object }).metadata)).toEqual([
      'telegram_id',
      'course',
      'utm_source',
      ...PEOPLE.map((_, i) => `<member-${i + 4}>`),
    ]);
    const put = guide.routes.find((r) => r.route === 'PUT /api/bots/api/leads/:id/')!;
    expect(Object.keys(put.sample!.call.query)).toEqual(PEOPLE.map((_, i) => `<member-${i + 1}>`));
    expect(put.v1_example!.body).toMatchObject({ answers: { age: '<number>' } });
  });
});
