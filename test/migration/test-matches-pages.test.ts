// The test calls that found a person, read page by page through the admin API: following `next`
// lists every row once, and an `after` this list did not answer is a 400 that changes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../helper.js';

let gw: Gateway;
let seq = 0;
const TELEGRAM = 'brightpath:telegram-bot';
const WEBSITE = 'brightpath:website-form';
const page = async (query: string) => gw.admin('GET', `/admin/v1/integrations/${TELEGRAM}/test-matches?${query}`);
interface MatchPage {
  items: { key_id: string; contact_id: string }[];
  rows: number;
  next: string | null;
}

beforeAll(async () => {
  gw = await startGateway();
  const live = await gw.issueKey(WEBSITE);
  const testKey = (await gw.admin('POST', `/admin/v1/integrations/${TELEGRAM}/keys/test`)).json<{ key: string }>().key;
  // Three persons of the website form, each found by a test call of the telegram bot.
  for (let i = 0; i < 3; i++) {
    const phone = `+99897${String(1_000_000 + ++seq * 7919).slice(-7)}`;
    expect((await gw.submit(live, { event_id: `live-${seq}`, first_name: 'Found', phone })).statusCode).toBe(201);
    expect((await gw.submit(testKey, { event_id: `test-${seq}`, first_name: 'Guess', phone })).statusCode).toBe(200);
  }
});
afterAll(() => gw.close());

describe('the test-matches list, page by page', () => {
  it('lists every row once when each page follows the next of the one before, and ends with no next', async () => {
    const whole = (await page('limit=50')).json<MatchPage>();
    expect(whole.items).toHaveLength(3);
    const seen: MatchPage['items'] = [];
    let next: string | null = null;
    do {
      const res = await page(`limit=1${next === null ? '' : `&after=${next}`}`);
      expect(res.statusCode).toBe(200);
      const body = res.json<MatchPage>();
      expect(body.rows).toBe(3);
      seen.push(...body.items);
      next = body.next;
    } while (next !== null && seen.length < 10);
    expect(seen).toEqual(whole.items);
  });

  it('refuses an after it did not answer with a 400 problem', async () => {
    const first = (await page('limit=1')).json<MatchPage>();
    // Not a token at all, a cut one, and one that decodes to no row of this list.
    for (const after of ['not-a-cursor', first.next!.slice(0, -3), Buffer.from('[]').toString('base64url')]) {
      const res = await page(`limit=1&after=${encodeURIComponent(after)}`);
      expect(res.statusCode).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.json()).toMatchObject({ code: 'bad-request' });
    }
    expect((await page('limit=50')).json<MatchPage>().items).toHaveLength(3);
  });
});
