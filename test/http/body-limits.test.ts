// Each write's body limit and counts, refused before the body is parsed: 413 past the route's size,
// 422 past its counts, with the same problem the schema gives; nothing stored either way.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANSWERS_BODY_LIMIT_BYTES, ANSWERS_BODY_MAX_VALUES, ANSWERS_MAX } from '../../src/answers/schemas.js';
import { LEAD_BODY_LIMIT_BYTES, LEAD_BODY_MAX_VALUES } from '../../src/intake/schemas.js';
import {
  LEGACY_CREATE_BODY_LIMIT_BYTES,
  LEGACY_ITEMS_MAX,
  LEGACY_SMALL_WRITE_BODY_LIMIT_BYTES,
  LEGACY_UPDATE_BODY_LIMIT_BYTES,
} from '../../src/legacy/schemas.js';
import { JSON_MAX_STRING_CHARS } from '../../src/http/json-body.js';
import { ADMIN_TOKEN, startGateway, type Gateway } from '../helper.js';

let gw: Gateway;
let key: string;
let leadId: string;
const LEGACY_KEY = 'body-limits-legacy-key-0123456789';
const legacy = { 'x-bot-api-key': LEGACY_KEY };

beforeAll(async () => {
  gw = await startGateway({ rateLimitPerMinute: 1_000_000 });
  key = await gw.issueKey('brightpath:telegram-bot');
  await gw.admin('POST', '/admin/v1/integrations/brightpath:telegram-bot/keys/import', { key: LEGACY_KEY });
  await gw.submit(key, {
    event_id: 'seed',
    external_contact_id: 'telegram:1',
    first_name: 'Seed',
    phone: '+998901234567',
  });
  const created = await send(
    'POST',
    '/api/bots/api/leads/',
    JSON.stringify({ first_name: 'Legacy', phone: '+998907770000' }),
    legacy,
  );
  leadId = created.json().id;
});
afterAll(() => gw.close());

function send(
  method: 'POST' | 'PATCH',
  url: string,
  payload: string,
  headers: Record<string, string> = { authorization: `Bearer ${key}` },
) {
  return gw.app.inject({ method, url, headers: { ...headers, 'content-type': 'application/json' }, payload });
}

const stored = async () =>
  (await gw.inspect.submissions.count()) + (await gw.inspect.leads.count()) + (await gw.inspect.answers.count());

/** `{...head, pad0: "xxx", ...}` exactly `bytes` long: strings under the scan's limit, members the route ignores or answers it stores. */
function bodyOf(bytes: number, head: Record<string, unknown>, padIn: 'top' | 'answers'): string {
  const make = (pads: string[]) => {
    const padded = Object.fromEntries(pads.map((p, i) => [`pad${i}`, p]));
    return JSON.stringify(padIn === 'top' ? { ...head, ...padded } : { ...head, answers: padded });
  };
  const count = Math.ceil(bytes / JSON_MAX_STRING_CHARS) + 1;
  const room = bytes - Buffer.byteLength(make(Array(count).fill('')));
  const pads = Array.from({ length: count }, (_, i) =>
    'x'.repeat(Math.floor(room / count) + (i < room % count ? 1 : 0)),
  );
  const text = make(pads);
  expect(Buffer.byteLength(text)).toBe(bytes);
  return text;
}

describe('the body limit of each write', () => {
  const routes = [
    {
      name: 'v1 leads',
      method: 'POST',
      url: '/api/integrations/v1/leads/',
      limit: LEAD_BODY_LIMIT_BYTES,
      head: { event_id: 'size', first_name: 'Size', phone: '+998901110001' },
      padIn: 'answers',
      ok: 201,
    },
    {
      name: 'v1 answers',
      method: 'POST',
      url: '/api/integrations/v1/leads/answers/',
      limit: ANSWERS_BODY_LIMIT_BYTES,
      head: { event_id: 'size', external_contact_id: 'telegram:1' },
      padIn: 'answers',
      ok: 200,
    },
    {
      name: 'legacy POST',
      method: 'POST',
      url: '/api/bots/api/leads/',
      limit: LEGACY_CREATE_BODY_LIMIT_BYTES,
      head: { first_name: 'Size', phone: '+998901110002' },
      padIn: 'top',
      ok: 201,
    },
    {
      name: 'legacy PATCH',
      method: 'PATCH',
      url: '/api/bots/api/leads/:id/',
      limit: LEGACY_UPDATE_BODY_LIMIT_BYTES,
      head: {},
      padIn: 'top',
      ok: 200,
    },
    {
      name: 'legacy comment',
      method: 'POST',
      url: '/api/bots/api/leads/:id/comments/',
      limit: LEGACY_SMALL_WRITE_BODY_LIMIT_BYTES,
      head: { text: 'Size' },
      padIn: 'top',
      ok: 201,
    },
    {
      name: 'legacy payment',
      method: 'POST',
      url: '/api/bots/api/leads/:id/payments/',
      limit: LEGACY_SMALL_WRITE_BODY_LIMIT_BYTES,
      head: { amount: '10.00' },
      padIn: 'top',
      ok: 201,
    },
    {
      name: 'legacy tags/create',
      method: 'POST',
      url: '/api/bots/api/tags/create/',
      limit: LEGACY_SMALL_WRITE_BODY_LIMIT_BYTES,
      head: { name: 'Size' },
      padIn: 'top',
      ok: 201,
    },
  ] as const;

  it.each(routes)(
    '$name: one byte over its limit is a 413 naming it, and nothing is stored',
    async ({ method, url, limit, head, padIn }) => {
      const before = await stored();
      const res = await send(
        method,
        url.replace(':id', leadId),
        bodyOf(limit + 1, head, padIn),
        url.startsWith('/api/bots') ? legacy : undefined,
      );
      expect(res.statusCode).toBe(413);
      expect(res.json()).toMatchObject({ code: 'payload-too-large', max_bytes: limit });
      expect(res.json().detail).toContain(`${limit} bytes`);
      expect(await stored()).toBe(before);
    },
  );

  it.each(routes)(
    '$name: a body of exactly its limit is read and answered by the schema and the service',
    async ({ method, url, limit, head, padIn, ok }) => {
      const res = await send(
        method,
        url.replace(':id', leadId),
        bodyOf(limit, head, padIn),
        url.startsWith('/api/bots') ? legacy : undefined,
      );
      expect(res.statusCode).toBe(ok);
    },
  );

  it('other routes keep the server-wide limit of 1 MiB', async () => {
    const res = await gw.app.inject({
      method: 'POST',
      url: '/admin/v1/integrations/brightpath:telegram-bot/keys',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      payload: 'x'.repeat(1_048_577),
    });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ code: 'payload-too-large', max_bytes: 1_048_576 });
  });
});

describe('counts refused while the text is scanned', () => {
  const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 1]));

  it('the 956 KB body of 90,000 answer keys is refused unread (413), and nothing is stored', async () => {
    const before = await stored();
    const payload = JSON.stringify({ event_id: 'huge', external_contact_id: 'telegram:1', answers: keys(90_000) });
    expect(payload.length).toBeGreaterThan(900_000);
    const res = await send('POST', '/api/integrations/v1/leads/answers/', payload);
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ code: 'payload-too-large', max_bytes: ANSWERS_BODY_LIMIT_BYTES });
    expect(await stored()).toBe(before);
  });

  it('10,000 answer keys within the size limit are the documented 422 at /answers, and nothing is stored', async () => {
    const before = await stored();
    for (const url of ['/api/integrations/v1/leads/answers/', '/api/integrations/v1/leads/']) {
      const res = await send(
        'POST',
        url,
        JSON.stringify({ event_id: 'many', external_contact_id: 'telegram:1', first_name: 'A', answers: keys(10_000) }),
      );
      expect(res.statusCode).toBe(422);
      expect(res.json()).toMatchObject({
        code: 'validation-failed',
        errors: [{ path: '/answers', message: `must hold at most ${ANSWERS_MAX} answers` }],
      });
    }
    // Refused before it is parsed: text broken after the 201st answer is never reached.
    const broken = await send(
      'POST',
      '/api/integrations/v1/leads/answers/',
      `{"event_id":"many","answers":${JSON.stringify(keys(ANSWERS_MAX + 1)).slice(0, -1)},`,
    );
    expect(broken.json()).toMatchObject({ status: 422, errors: [{ path: '/answers' }] });
    expect(await stored()).toBe(before);
  });

  it('the refusal of the scan is the very problem the schema gives (the key spelled with an escape reaches the schema)', async () => {
    const answers = JSON.stringify(keys(ANSWERS_MAX + 1));
    const strip = (body: Record<string, unknown>) => ({ ...body, request_id: undefined });
    const url = '/api/integrations/v1/leads/answers/';
    const byScan = await send(
      'POST',
      url,
      `{"event_id":"same","external_contact_id":"telegram:1","answers":${answers}}`,
    );
    const bySchema = await send(
      'POST',
      url,
      `{"event_id":"same","external_contact_id":"telegram:1","answ\\u0065rs":${answers}}`,
    );
    expect(byScan.statusCode).toBe(422);
    expect(strip(byScan.json())).toEqual(strip(bySchema.json()));
    for (const member of ['tag_ids', 'extra_data']) {
      const items =
        member === 'tag_ids'
          ? JSON.stringify(Array(LEGACY_ITEMS_MAX + 1).fill('t'))
          : JSON.stringify(keys(LEGACY_ITEMS_MAX + 1));
      const escaped = member.replace('a', '\\u0061');
      const scan = await send('POST', '/api/bots/api/leads/', `{"first_name":"A","${member}":${items}}`, legacy);
      const schema = await send('POST', '/api/bots/api/leads/', `{"first_name":"A","${escaped}":${items}}`, legacy);
      expect(scan.statusCode).toBe(422);
      expect(scan.json().errors).toEqual([
        { path: `/${member}`, message: expect.stringContaining(`at most ${LEGACY_ITEMS_MAX}`) },
      ]);
      expect(strip(scan.json())).toEqual(strip(schema.json()));
    }
  });

  it('values past the route cap are a 422 too-many-values naming the cap and where, on every write', async () => {
    const before = await stored();
    const lead = await send(
      'POST',
      '/api/integrations/v1/leads/',
      JSON.stringify({ event_id: 'values', first_name: 'A', metadata: { list: Array(LEAD_BODY_MAX_VALUES).fill(0) } }),
    );
    expect(lead.statusCode).toBe(422);
    expect(lead.json()).toMatchObject({
      code: 'too-many-values',
      max_values: LEAD_BODY_MAX_VALUES,
      errors: [{ path: `/metadata/list/${LEAD_BODY_MAX_VALUES - 4}` }],
    });
    const answers = await send(
      'POST',
      '/api/integrations/v1/leads/answers/',
      JSON.stringify({
        event_id: 'values',
        external_contact_id: 'telegram:1',
        answers: { a: Array(ANSWERS_BODY_MAX_VALUES).fill(0) },
      }),
    );
    expect(answers.json()).toMatchObject({ status: 422, code: 'too-many-values', max_values: ANSWERS_BODY_MAX_VALUES });
    const patch = await send(
      'PATCH',
      `/api/bots/api/leads/${leadId}/`,
      JSON.stringify({ ignored: Array(LEAD_BODY_MAX_VALUES).fill(0) }),
      legacy,
    );
    expect(patch.json()).toMatchObject({ status: 422, code: 'too-many-values' });
    expect(await stored()).toBe(before);
  });

  it('a lead whose metadata holds as many values as 16 KiB can (an array of zeros) is taken, with 200 answers', async () => {
    const list = Array(8_000).fill(0);
    expect(Buffer.byteLength(JSON.stringify({ list }))).toBeLessThanOrEqual(16_384);
    const answers = Object.fromEntries(Array.from({ length: ANSWERS_MAX }, (_, i) => [`a${i}`, i]));
    const res = await send(
      'POST',
      '/api/integrations/v1/leads/',
      JSON.stringify({
        event_id: 'fullest-metadata',
        first_name: 'Full',
        phone: '+998901110009',
        metadata: { list },
        answers,
      }),
    );
    expect(res.statusCode).toBe(201);
  });

  it('a string past the scan limit is a 422 string-too-long before the schema reads it', async () => {
    const res = await send(
      'POST',
      '/api/integrations/v1/leads/',
      JSON.stringify({ event_id: 'long', first_name: 'A', notes: 'n'.repeat(JSON_MAX_STRING_CHARS + 1) }),
    );
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({
      code: 'string-too-long',
      max_chars: JSON_MAX_STRING_CHARS,
      errors: [{ path: '/notes' }],
    });
  });
});
