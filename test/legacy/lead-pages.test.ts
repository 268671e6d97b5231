// GET leads/ of the deprecated interface: pages by cursor at any depth, page= within a bound, a count kept by triggers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LEGACY_PAGE_DEPTH_MAX } from '../../src/legacy/schemas.js';
import { startGateway, type Gateway } from '../helper.js';

let gw: Gateway;
const KEY = 'lead-pages-legacy-key-0123456789';
const OTHER = 'lead-pages-other-key-0123456789';
let phone = 0;

beforeAll(async () => {
  gw = await startGateway({ rateLimitPerMinute: 1_000_000 });
  await gw.admin('POST', '/admin/v1/integrations/brightpath:telegram-bot/keys/import', { key: KEY });
  await gw.admin('POST', '/admin/v1/integrations/brightpath:website-form/keys/import', { key: OTHER });
  for (let i = 0; i < 7; i++) await create(KEY);
  await create(OTHER);
});
afterAll(() => gw.close());

async function create(key: string): Promise<string> {
  phone++;
  const res = await bot('POST', '/api/bots/api/leads/', key, {
    first_name: `Lead ${phone}`,
    phone: `+99890${String(phone).padStart(7, '0')}`,
    extra_data: { telegram_id: phone },
  });
  expect(res.statusCode).toBe(201);
  return res.json().id;
}

const bot = (method: 'GET' | 'POST' | 'DELETE', url: string, key = KEY, body?: object) =>
  gw.app.inject({ method, url, headers: { 'x-bot-api-key': key }, ...(body ? { payload: body } : {}) });

interface Page {
  count: number;
  next: string | null;
  previous: string | null;
  results: { id: string }[];
}
const read = async (url: string): Promise<Page> => {
  const res = await bot('GET', url);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};
const ids = (page: Page) => page.results.map((l) => l.id);

describe('GET leads/', () => {
  it('follows next and previous links (cursors) through every lead, newest first, once each', async () => {
    const all = ids(await read('/api/bots/api/leads/?page_size=100'));
    expect(all).toHaveLength(7);
    const first = await read('/api/bots/api/leads/?page_size=3');
    expect(first).toMatchObject({ count: 7, previous: null });
    expect(first.next).toMatch(/^\/api\/bots\/api\/leads\/\?page=2&page_size=3&after=/);
    const second = await read(first.next!);
    const third = await read(second.next!);
    expect(third.next).toBeNull();
    expect([...ids(first), ...ids(second), ...ids(third)]).toEqual(all);
    expect(ids(await read(third.previous!))).toEqual(ids(second));
    expect(ids(await read(second.previous!))).toEqual(ids(first));
    expect((await read(second.previous!)).previous).toBeNull();
    // page= alone gives the same page as the cursor.
    expect(ids(await read('/api/bots/api/leads/?page=2&page_size=3'))).toEqual(ids(second));
  });

  it('a lead created between two reads does not shift the pages of a bot that follows the next link', async () => {
    const first = await read('/api/bots/api/leads/?page_size=3');
    const before = ids(await read('/api/bots/api/leads/?page_size=100'));
    await create(KEY);
    expect(ids(await read(first.next!))).toEqual(before.slice(3, 6));
    expect((await read('/api/bots/api/leads/?page_size=3')).count).toBe(8);
  });

  it('counts only the leads that are not deleted', async () => {
    const newest = ids(await read('/api/bots/api/leads/?page_size=1'))[0]!;
    expect((await bot('DELETE', `/api/bots/api/leads/${newest}/`)).statusCode).toBe(204);
    const page = await read('/api/bots/api/leads/?page_size=100');
    expect(page.count).toBe(7);
    expect(ids(page)).not.toContain(newest);
  });

  it(`page= reaches ${LEGACY_PAGE_DEPTH_MAX} leads deep; deeper is a 422 pointing at the next link`, async () => {
    expect(await read(`/api/bots/api/leads/?page=${LEGACY_PAGE_DEPTH_MAX / 100}&page_size=100`)).toMatchObject({
      count: 7,
      next: null,
      results: [],
    });
    const res = await bot('GET', `/api/bots/api/leads/?page=${LEGACY_PAGE_DEPTH_MAX / 100 + 1}&page_size=100`);
    expect(res.statusCode).toBe(422);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json().errors).toEqual([
      { path: '/page', message: expect.stringContaining(`at most ${LEGACY_PAGE_DEPTH_MAX}`) },
    ]);
    expect(res.json().errors[0].message).toContain('follow the next link');
  });

  it('a cursor that is not one is a 422', async () => {
    const res = await bot('GET', '/api/bots/api/leads/?after=bm90IGEgY3Vyc29y');
    expect(res.statusCode).toBe(422);
    expect(res.json().errors[0]).toMatchObject({ path: '/after' });
  });
});
