// Legacy payments: bounded amounts, summed exactly, never overflowing into a 500.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAYMENT_INTEGER_DIGITS_MAX } from '../../src/legacy/store-actions.js';
import { startGateway, type Gateway } from '../helper.js';

let gw: Gateway;
let v1Key: string;
const KEY = 'payments-legacy-key-0123456789';
let leadId: string;

beforeAll(async () => {
  gw = await startGateway({ rateLimitPerMinute: 1_000_000 });
  v1Key = await gw.issueKey('brightpath:telegram-bot');
  await gw.admin('POST', '/admin/v1/integrations/brightpath:telegram-bot/keys/import', { key: KEY });
  const created = await bot('POST', '/api/bots/api/leads/', {
    first_name: 'Payer',
    phone: '+998907770000',
    extra_data: { telegram_id: 5 },
  });
  leadId = created.json().id;
});
afterAll(() => gw.close());

const bot = (method: 'GET' | 'POST', url: string, payload?: object | string) =>
  gw.app.inject({
    method,
    url,
    headers: { 'x-bot-api-key': KEY, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(payload === undefined ? {} : { payload: typeof payload === 'string' ? payload : JSON.stringify(payload) }),
  });
const pay = (amount: unknown) => bot('POST', `/api/bots/api/leads/${leadId}/payments/`, { amount });
const largest = `${'9'.repeat(PAYMENT_INTEGER_DIGITS_MAX)}.99`;

describe('POST leads/{id}/payments/', () => {
  it('sums the largest amounts exactly, past where SQLite sum() overflowed (every read was a 500)', async () => {
    // 93 payments of 999,999,999,999,999.99 are 9.3e18 hundredths: past 2^63, where sum() failed.
    for (let i = 0; i < 93; i++) expect((await pay(largest)).json()).toMatchObject({ amount: largest });
    const read = await bot('GET', `/api/bots/api/leads/${leadId}/`);
    expect(read.statusCode).toBe(200);
    expect(read.json().total_paid).toBe('92999999999999999.07');
    // The person's next v1 submission renders the same lead: no 500 there either.
    const again = await gw.submit(v1Key, {
      event_id: 'pay-again',
      external_contact_id: 'telegram:5',
      first_name: 'Payer',
    });
    expect(again.statusCode).toBe(200);
    expect(again.json().lead.total_paid).toBe('92999999999999999.07');
    expect((await pay('0.01')).statusCode).toBe(201);
    expect((await bot('GET', `/api/bots/api/leads/${leadId}/`)).json().total_paid).toBe('92999999999999999.08');
  });

  it(`refuses an amount over ${PAYMENT_INTEGER_DIGITS_MAX} integer digits or 2 decimals, and a number that would be rounded, with a 422`, async () => {
    const before = await gw.inspect.leadPayments.count();
    for (const amount of [`1${'0'.repeat(PAYMENT_INTEGER_DIGITS_MAX)}`, '1.005', '-5', 'abc', 1e21]) {
      const res = await pay(amount);
      expect(res.statusCode, String(amount)).toBe(422);
      expect(res.json().errors[0].path).toBe('/amount');
    }
    const rounded = await bot('POST', `/api/bots/api/leads/${leadId}/payments/`, '{"amount": 999999999999999.99}');
    expect(rounded.statusCode).toBe(422);
    expect(rounded.json().errors[0].message).toContain('send it as a string');
    expect(await gw.inspect.leadPayments.count()).toBe(before);
    expect((await pay(99.5)).json().amount).toBe('99.50');
  });
});
