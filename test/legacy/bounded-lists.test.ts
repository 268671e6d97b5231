// A lead's comments and a workspace's created tags are capped, so their legacy lists are bounded; a page when asked.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../helper.js';
import { stableId } from '../../src/rules/ids.js';
import { newId } from '../../src/store/ids.js';
import { COMMENT_BYTES_PER_LEAD_MAX, COMMENTS_PER_LEAD_MAX } from '../../src/lead/comments.js';
import { LEGACY_TAGS_PER_WORKSPACE_MAX } from '../../src/legacy/service.js';

let gw: Gateway;
let v1Key: string;
const KEY = 'bounded-lists-legacy-key-0123456789';
let seq = 0;
const phone = () => `+99891${String(1_000_000 + ++seq * 7919).slice(-7)}`;

beforeAll(async () => {
  gw = await startGateway();
  await gw.admin('POST', '/admin/v1/integrations/brightpath:telegram-bot/keys/import', { key: KEY });
  v1Key = await gw.issueKey('brightpath:telegram-bot');
});
afterAll(() => gw.close());

const bot = (method: 'GET' | 'POST', url: string, body?: object) =>
  gw.app.inject({
    method,
    url: `/api/bots/api${url}`,
    headers: { 'x-bot-api-key': KEY },
    ...(body ? { payload: body } : {}),
  });

async function newLegacyLead(): Promise<string> {
  const res = await bot('POST', '/leads/', { first_name: `Bounded ${++seq}`, phone: phone() });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id;
}

/** Comments written straight into the store, a millisecond apart and in the past: a lead filled up to a cap without as many requests. */
async function fillComments(leadId: string, bodies: string[]): Promise<void> {
  const start = Date.now() - 3_600_000;
  await gw.store.transact(async (tx) => {
    for (const [i, body] of bodies.entries()) {
      await tx.leads.addComment({
        id: newId(),
        leadId,
        body,
        authorKind: 'integration',
        authorRef: null,
        createdAt: new Date(start + i).toISOString(),
      });
    }
  });
}

const comments = async (leadId: string, query = '') => {
  const res = await bot('GET', `/leads/${leadId}/comments/${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};

describe('comments of a lead', () => {
  let leadId: string;
  beforeAll(async () => {
    leadId = await newLegacyLead();
    await fillComments(
      leadId,
      Array.from({ length: COMMENTS_PER_LEAD_MAX - 1 }, (_, i) => `filler ${i}`),
    );
  });

  it(`hold at most ${COMMENTS_PER_LEAD_MAX}: one more is a 409 naming the cap, and nothing is stored`, async () => {
    expect((await bot('POST', `/leads/${leadId}/comments/`, { text: 'the last that fits' })).statusCode).toBe(201);
    const res = await bot('POST', `/leads/${leadId}/comments/`, { text: 'one too many' });
    expect(res.statusCode).toBe(409);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({
      code: 'limit-reached',
      status: 409,
      limit: 'comments_per_lead',
      max: COMMENTS_PER_LEAD_MAX,
    });
    expect(res.json().detail).toContain(String(COMMENTS_PER_LEAD_MAX));
    const all = await comments(leadId);
    expect(all).toHaveLength(COMMENTS_PER_LEAD_MAX);
    expect(all.at(-1).text).toBe('the last that fits');
    expect((await bot('GET', `/leads/${leadId}/`)).json().comments_count).toBe(COMMENTS_PER_LEAD_MAX);
  });

  it('answer the plain array without page=, and a page of it with page= (oldest first)', async () => {
    const all = await comments(leadId);
    expect(Array.isArray(all)).toBe(true);
    const second = await comments(leadId, '?page=2&page_size=100');
    expect(second).toEqual({
      count: COMMENTS_PER_LEAD_MAX,
      next: `/api/bots/api/leads/${leadId}/comments/?page=3&page_size=100`,
      previous: `/api/bots/api/leads/${leadId}/comments/?page=1&page_size=100`,
      results: all.slice(100, 200),
    });
    // page_size= alone asks for the first page; 20 a page when only page= is given.
    expect(await comments(leadId, '?page_size=7')).toMatchObject({ previous: null, results: all.slice(0, 7) });
    expect((await comments(leadId, '?page=1')).results).toEqual(all.slice(0, 20));
    const last = await comments(leadId, `?page=${COMMENTS_PER_LEAD_MAX / 100}&page_size=100`);
    expect(last.next).toBeNull();
    expect(last.results).toEqual(all.slice(-100));
    // Past the end: an empty page (as GET leads/ answers it), its previous link the last page.
    expect(await comments(leadId, '?page=9999999&page_size=100')).toEqual({
      count: COMMENTS_PER_LEAD_MAX,
      next: null,
      previous: `/api/bots/api/leads/${leadId}/comments/?page=${COMMENTS_PER_LEAD_MAX / 100}&page_size=100`,
      results: [],
    });
  });

  it('refuse a page or page size out of range with a 422', async () => {
    for (const query of ['?page=0', '?page=x', '?page_size=0', '?page_size=101']) {
      const res = await bot('GET', `/leads/${leadId}/comments/${query}`);
      expect(res.statusCode, query).toBe(422);
      expect(res.json().code).toBe('validation-failed');
    }
  });

  it(`a lead that held more before the caps: the plain array is its oldest ${COMMENTS_PER_LEAD_MAX}, page= reaches the rest`, async () => {
    const lead = await newLegacyLead();
    await fillComments(
      lead,
      Array.from({ length: COMMENTS_PER_LEAD_MAX + 1 }, (_, i) => `old ${i}`),
    );
    const all = await comments(lead);
    expect(all).toHaveLength(COMMENTS_PER_LEAD_MAX);
    expect(all.at(-1).text).toBe(`old ${COMMENTS_PER_LEAD_MAX - 1}`);
    const rest = await comments(lead, `?page=${COMMENTS_PER_LEAD_MAX / 100 + 1}&page_size=100`);
    expect(rest).toMatchObject({ count: COMMENTS_PER_LEAD_MAX + 1, next: null });
    expect(rest.results.map((c: { text: string }) => c.text)).toEqual([`old ${COMMENTS_PER_LEAD_MAX}`]);
    expect((await bot('POST', `/leads/${lead}/comments/`, { text: 'more' })).statusCode).toBe(409);
  });

  it(`hold at most ${COMMENT_BYTES_PER_LEAD_MAX} bytes of UTF-8 text, counted in bytes, not characters`, async () => {
    const lead = await newLegacyLead();
    await fillComments(lead, ['x'.repeat(COMMENT_BYTES_PER_LEAD_MAX - 10)]);
    // Six characters of two bytes each: 12 bytes, two past the cap.
    const res = await bot('POST', `/leads/${lead}/comments/`, { text: 'жжжжжж' });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({
      code: 'limit-reached',
      limit: 'comment_bytes_per_lead',
      max: COMMENT_BYTES_PER_LEAD_MAX,
    });
    expect(await comments(lead)).toHaveLength(1);
    expect((await bot('POST', `/leads/${lead}/comments/`, { text: 'жжжжж' })).statusCode).toBe(201);
    expect(await comments(lead)).toHaveLength(2);
  });
});

describe('v1 notes on a lead whose comments are at the cap', () => {
  it("the attach still answers 200; the note is not a comment, it stays on that inquiry's submission", async () => {
    const person = `bounded-${++seq}`;
    const first = await gw.submit(v1Key, {
      event_id: `bounded-e-${seq}`,
      external_contact_id: person,
      first_name: 'Notes',
      notes: 'the first inquiry',
    });
    expect(first.statusCode).toBe(201);
    const leadId = first.json().lead.id;
    await fillComments(
      leadId,
      Array.from({ length: COMMENTS_PER_LEAD_MAX }, (_, i) => `filler ${i}`),
    );
    const note = `asked again, past the cap ${seq}`;
    const res = await gw.submit(v1Key, {
      event_id: `bounded-e2-${seq}`,
      external_contact_id: person,
      first_name: 'Notes',
      notes: note,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      intake_outcome: 'attached',
      lead: { id: leadId, comments_count: COMMENTS_PER_LEAD_MAX, notes: 'the first inquiry' },
    });
    expect((await comments(leadId)).map((c: { text: string }) => c.text)).not.toContain(note);
    const [submission] = await gw.inspect.submissions.list({ id: res.json().submission_id }, ['body']);
    expect((submission!.body as { notes: string }).notes).toBe(note);
  });
});

describe('tags created with tags/create/', () => {
  let workspaceId: string;
  const filler = (i: number) => `bounded filler ${i}`;
  beforeAll(async () => {
    workspaceId = (await bot('GET', '/info/')).json().workspace.id;
    const createdAt = new Date().toISOString();
    await gw.store.transact(async (tx) => {
      for (let i = 0; i < LEGACY_TAGS_PER_WORKSPACE_MAX - 1; i++) {
        await tx.legacyTags.ensure({
          workspaceId,
          id: stableId('brightpath', 'tag', filler(i)),
          name: filler(i),
          color: null,
          createdAt,
        });
      }
    });
  });

  const tags = async (query = '') => {
    const res = await bot('GET', `/tags/${query}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };

  it(`are at most ${LEGACY_TAGS_PER_WORKSPACE_MAX} a workspace: a new one past it is a 409, one created before still answers`, async () => {
    const catalog = (await tags()).length - (LEGACY_TAGS_PER_WORKSPACE_MAX - 1);
    const last = await bot('POST', '/tags/create/', { name: 'the last that fits' });
    expect(last.statusCode).toBe(201);
    const res = await bot('POST', '/tags/create/', { name: 'one too many' });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({
      code: 'limit-reached',
      limit: 'tags_per_workspace',
      max: LEGACY_TAGS_PER_WORKSPACE_MAX,
    });
    expect(res.json().detail).toContain(String(LEGACY_TAGS_PER_WORKSPACE_MAX));
    // Creating a tag that exists is idempotent at the cap: the same id, nothing added.
    const again = await bot('POST', '/tags/create/', { name: 'the last that fits' });
    expect(again.statusCode).toBe(201);
    expect(again.json().id).toBe(last.json().id);
    expect((await bot('POST', '/tags/create/', { name: filler(3) })).json().id).toBe(
      stableId('brightpath', 'tag', filler(3)),
    );
    expect((await bot('POST', '/tags/create/', { name: 'Telegram' })).statusCode).toBe(201);
    const all = await tags();
    expect(all).toHaveLength(catalog + LEGACY_TAGS_PER_WORKSPACE_MAX);
    expect(all.map((t: { name: string }) => t.name)).not.toContain('one too many');
  });

  it('answer the plain array without page=, and a page of it with page=', async () => {
    const all = await tags();
    const page = await tags('?page=2&page_size=50');
    expect(page).toEqual({
      count: all.length,
      next: '/api/bots/api/tags/?page=3&page_size=50',
      previous: '/api/bots/api/tags/?page=1&page_size=50',
      results: all.slice(50, 100),
    });
    expect((await bot('GET', '/tags/?page_size=101')).statusCode).toBe(422);
  });
});
