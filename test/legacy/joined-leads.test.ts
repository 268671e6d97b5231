// A legacy bot can use the lead id it was given when its submission joined an existing lead.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../helper.js';

let gw: Gateway;
const TG_KEY = 'joined-leads-telegram-key-0001';
const WEB_KEY = 'joined-leads-website-key-0001';
const DENTAL_KEY = 'joined-leads-dental-key-0001';

beforeAll(async () => {
  gw = await startGateway();
  for (const [handle, key] of [
    ['brightpath:telegram-bot', TG_KEY],
    ['brightpath:website-form', WEB_KEY],
    ['smile-dental:booking-form', DENTAL_KEY],
  ]) {
    expect((await gw.admin('POST', `/admin/v1/integrations/${handle}/keys/import`, { key })).statusCode).toBe(201);
  }
});
afterAll(() => gw.close());

const legacy = (key: string, method: 'GET' | 'POST' | 'PATCH' | 'PUT', url: string, body?: object) =>
  gw.app.inject({
    method,
    url: `/api/bots/api${url}`,
    headers: { 'x-bot-api-key': key },
    ...(body ? { payload: body } : {}),
  });

describe('the legacy view of an integration', () => {
  it('holds the leads it created and the leads its submissions joined; not those of others', async () => {
    // The person is known already: the website form created their lead.
    const first = await legacy(WEB_KEY, 'POST', '/leads/', { first_name: 'Nodira', phone: '+998 90 555 11 22' });
    expect(first.statusCode).toBe(201);
    const leadId = first.json().id as string;

    // The telegram bot submits the same person: its submission joins that lead, and it is given its id.
    const joined = await legacy(TG_KEY, 'POST', '/leads/', {
      first_name: 'Nodira',
      phone: '+998905551122',
      extra_data: { telegram_id: 9001 },
    });
    expect(joined.json().id).toBe(leadId);

    // The id it was given works on every by-id route of the bot.
    expect((await legacy(TG_KEY, 'GET', `/leads/${leadId}/`)).statusCode).toBe(200);
    const patched = await legacy(TG_KEY, 'PATCH', `/leads/${leadId}/`, { extra_data: { course: 'python' } });
    expect(patched.statusCode).toBe(200);
    expect((await legacy(TG_KEY, 'PUT', `/leads/${leadId}/`, { extra_data: { course: 'python' } })).statusCode).toBe(
      200,
    );
    expect((await legacy(TG_KEY, 'GET', `/leads/${leadId}/comments/`)).statusCode).toBe(200);
    expect((await legacy(TG_KEY, 'POST', `/leads/${leadId}/comments/`, { text: 'called back' })).statusCode).toBe(201);

    // Moving, deleting and recording payments stay with the integration that created the lead.
    const stage = (await legacy(TG_KEY, 'GET', '/boards/')).json()[0].stages[1].id as string;
    expect((await legacy(TG_KEY, 'POST', `/leads/${leadId}/move/`, { stage })).statusCode).toBe(404);
    expect(
      (await legacy(TG_KEY, 'POST', `/leads/${leadId}/payments/`, { amount: '999999999999999.99' })).statusCode,
    ).toBe(404);
    expect(
      (
        await gw.app.inject({
          method: 'DELETE',
          url: `/api/bots/api/leads/${leadId}/`,
          headers: { 'x-bot-api-key': TG_KEY },
        })
      ).statusCode,
    ).toBe(404);
    expect((await gw.admin('GET', `/admin/v1/leads/${leadId}`)).statusCode).toBe(200);
    expect((await legacy(WEB_KEY, 'POST', `/leads/${leadId}/move/`, { stage })).statusCode).toBe(200);

    // Another workspace's bot never reaches it.
    expect((await legacy(DENTAL_KEY, 'GET', `/leads/${leadId}/`)).statusCode).toBe(404);
    expect((await legacy(DENTAL_KEY, 'PATCH', `/leads/${leadId}/`, { extra_data: { x: 1 } })).statusCode).toBe(404);
  });

  it('does not hold a lead of its workspace that it never touched', async () => {
    const other = await legacy(TG_KEY, 'POST', '/leads/', {
      first_name: 'Sardor',
      phone: '+998907770000',
      extra_data: { telegram_id: 9002 },
    });
    const leadId = other.json().id as string;
    expect((await legacy(WEB_KEY, 'GET', `/leads/${leadId}/`)).statusCode).toBe(404);
    expect((await legacy(WEB_KEY, 'PATCH', `/leads/${leadId}/`, { extra_data: { x: 1 } })).statusCode).toBe(404);
    expect((await legacy(TG_KEY, 'GET', `/leads/${leadId}/`)).statusCode).toBe(200);
  });
});

describe('the person id of a legacy lead', () => {
  it('refuses an extra_data number it is made of that JavaScript would round, and takes it as a string', async () => {
    // Sent as text: a JavaScript literal would be rounded before it left the test.
    const raw = await gw.app.inject({
      method: 'POST',
      url: '/api/bots/api/leads/',
      headers: { 'x-bot-api-key': TG_KEY, 'content-type': 'application/json' },
      payload: '{"first_name":"Big","extra_data":{"telegram_id":12345678901234567891}}',
    });
    expect(raw.statusCode).toBe(422);
    expect(raw.json().errors).toEqual([
      { path: '/extra_data/telegram_id', message: expect.stringMatching(/send it as a string/) },
    ]);
    const asString = await legacy(TG_KEY, 'POST', '/leads/', {
      first_name: 'Big',
      extra_data: { telegram_id: '12345678901234567891' },
    });
    expect(asString.statusCode).toBe(201);
  });
});
