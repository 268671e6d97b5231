// Property-based: random, mutated and costly bodies (nesting past the limit, huge key counts, numbers
// JavaScript rounds), headers and keys against the v1, legacy and admin routes.
// Whatever arrives, the answer is never a 5xx, every 4xx carries a problem body, and a 4xx changes
// nothing in the database. (Arbitraries are written by hand: zod-fast-check knows zod 3 only.)
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startGateway, type Gateway } from '../helper.js';
import { scale } from './scale.js';
import { snapshot as takeSnapshot } from '../support/snapshot.js';

let gw: Gateway;
let v1Key: string;
let otherWorkspaceKey: string;
const LEGACY_KEY = 'property-legacy-key-0123456789';
let leadId: string;

beforeAll(async () => {
  // Random keys fail authentication; without a high threshold the address would be throttled (429) early.
  gw = await startGateway({ rateLimitPerMinute: 1_000_000, authFailuresPerMinute: 1_000_000 });
  v1Key = await gw.issueKey('brightpath:telegram-bot');
  otherWorkspaceKey = await gw.issueKey('smile-dental:booking-form');
  await gw.admin('POST', '/admin/v1/integrations/brightpath:telegram-bot/keys/import', { key: LEGACY_KEY });
  const first = await gw.submit(v1Key, {
    event_id: 'seed-1',
    external_contact_id: 'telegram:1',
    first_name: 'Seed',
    phone: '+998901234567',
  });
  leadId = first.json().lead.id;
});
afterAll(() => gw.close());

const snapshot = () => takeSnapshot(gw.store);

// ---- arbitraries -------------------------------------------------------------------------------

const printable = fc.stringMatching(/^[\x20-\x7e]{0,80}$/);
const text = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 60 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    '+998901234567',
    'telegram:1',
    'x'.repeat(5000),
    '{"a":1}',
    '../../etc/passwd',
    "'; DROP TABLE leads; --",
  ),
);
const anyJson = fc.jsonValue({ maxDepth: 3 });
/** A valid value or something else entirely. */
const maybe = <T>(valid: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 2, arbitrary: valid }, { weight: 1, arbitrary: anyJson }, { weight: 1, arbitrary: text });

const leadBody = fc.record(
  {
    event_id: maybe(fc.stringMatching(/^[a-z0-9:-]{1,40}$/)),
    external_contact_id: maybe(fc.constantFrom('telegram:1', 'telegram:2', 'web:9')),
    first_name: maybe(fc.constantFrom('Aziza', 'Olim', ' ')),
    last_name: maybe(fc.constantFrom('Karimova', null)),
    phone: maybe(fc.constantFrom('+998901234567', '90 123 45 67', '12', null)),
    email: maybe(fc.constantFrom('a@example.com', 'not-an-email', null)),
    notes: maybe(text),
    metadata: maybe(fc.dictionary(printable, anyJson, { maxKeys: 4 })),
    answers: maybe(
      fc.dictionary(fc.constantFrom('laptop', 'age', 'course', 'days', 'unknown_key', ''), anyJson, { maxKeys: 4 }),
    ),
  },
  { requiredKeys: [] },
);
/** A valid lead, then up to two of its members replaced by anything (or removed). */
const validLead = fc.record(
  {
    event_id: fc.stringMatching(/^[a-z0-9:-]{1,40}$/),
    first_name: fc.constantFrom('Aziza', 'Olim'),
    external_contact_id: fc.constantFrom('telegram:1', 'telegram:2', 'web:9'),
    phone: fc.constantFrom('+998901234567', '+998907654321'),
    answers: fc.dictionary(
      fc.constantFrom('laptop', 'age', 'course'),
      fc.constantFrom('ha', 'yes', 30, 'python', true),
      { maxKeys: 3 },
    ),
  },
  { requiredKeys: ['event_id', 'first_name'] },
);
const mutatedLead = fc
  .tuple(
    validLead,
    fc.array(
      fc.tuple(
        fc.constantFrom('event_id', 'first_name', 'phone', 'email', 'answers', 'metadata', 'notes', 'stage', 'tags'),
        fc.oneof(anyJson, text, fc.constant(undefined)),
      ),
      { maxLength: 2 },
    ),
  )
  .map(([lead, changes]) => Object.assign({ ...lead }, Object.fromEntries(changes)));
const withExtras = <T extends object>(body: fc.Arbitrary<T>) =>
  fc.tuple(body, fc.dictionary(printable, anyJson, { maxKeys: 2 })).map(([b, extra]) => ({ ...extra, ...b }));

// Bodies that cost: nesting past the depth limit, more keys than any bound, numbers JavaScript rounds.
// They are raw JSON text, since a number like 1e400 cannot survive JSON.stringify.
const hugeNumber = fc.constantFrom(
  '1e400',
  '-1e400',
  '1e-400',
  '12345678901234567890',
  '999999999999999.99',
  '9007199254740993',
  '0.1000000000000000000001',
  '1e21',
);
const deepValue = fc
  .tuple(fc.integer({ min: 20, max: 3000 }), fc.boolean())
  .map(([n, arrays]) => (arrays ? '['.repeat(n) + ']'.repeat(n) : '{"a":'.repeat(n) + '1' + '}'.repeat(n)));
const manyKeys = fc
  .tuple(fc.integer({ min: 150, max: 3000 }), fc.constantFrom('k', '', 'age'), hugeNumber)
  .map(
    ([n, prefix, number]) =>
      `{${Array.from({ length: n }, (_, i) => `"${prefix}${i}":${i % 7 === 0 ? number : `"v${i}"`}`).join(',')}}`,
  );
const numbersInside = hugeNumber.map(
  (n) => `{"age":${n},"laptop":"yes","telegram_id":${n},"course":"python","goal":${n}}`,
);
const manyItems = fc
  .integer({ min: 150, max: 3000 })
  .map((n) => `[${Array.from({ length: n }, (_, i) => `"${i}"`).join(',')}]`);
const hostileValue = fc.oneof(hugeNumber, deepValue, manyKeys, numbersInside, manyItems);

/** A body with one member (existing or new) replaced by a hostile JSON text. */
const hostile = (body: fc.Arbitrary<object>, members: readonly string[]) =>
  fc.tuple(body, fc.constantFrom(...members), hostileValue).map(([b, member, raw]) => {
    const rest = JSON.stringify({ ...b, [member]: undefined });
    return rest === '{}' ? `{${JSON.stringify(member)}:${raw}}` : `{${JSON.stringify(member)}:${raw},${rest.slice(1)}`;
  });

/** What goes on the wire: a JSON text of the body, some other JSON, bytes that are not JSON, or a costly body. */
const payload = (body: fc.Arbitrary<unknown>, costly: fc.Arbitrary<string> = fc.constant('{}')) =>
  fc.oneof(
    { weight: 4, arbitrary: body.map((b) => JSON.stringify(b)) },
    { weight: 2, arbitrary: costly },
    { weight: 1, arbitrary: anyJson.map((b) => JSON.stringify(b)) },
    {
      weight: 1,
      arbitrary: fc.oneof(
        text,
        fc.constantFrom('{', '{"event_id":', '[]', 'null', '{"__proto__":{"x":1}}', '\uFEFF{}'),
      ),
    },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
const contentType = fc.oneof(
  { weight: 4, arbitrary: fc.constant('application/json') },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      'application/json; charset=utf-8',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data',
      'application/problem+json',
    ),
  },
  { weight: 1, arbitrary: printable },
);
const bearer = () =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constant(`Bearer ${v1Key}`) },
    { weight: 1, arbitrary: fc.constant(`Bearer ${otherWorkspaceKey}`) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '',
        'Bearer',
        'Bearer ',
        `bearer ${v1Key}`,
        `Basic ${v1Key}`,
        `Bearer ${v1Key}x`,
        `Bearer ${LEGACY_KEY}`,
        `Bearer ${ADMIN_TOKEN}`,
      ),
    },
    { weight: 1, arbitrary: printable },
  );
const uuidish = fc.oneof(
  fc.uuid(),
  fc.constant('00000000-0000-0000-0000-000000000000'),
  printable.map(encodeURIComponent),
);

interface Call {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload: string | undefined;
}

// ---- the property ------------------------------------------------------------------------------

/** Statuses seen by the current property: it must reach both accepted and refused requests. */
const seen = { ok: 0, refused: 0 };
const expectBothOutcomes = () => {
  expect(seen.ok, 'no request of this property was accepted: it tests only the front door').toBeGreaterThan(0);
  expect(seen.refused).toBeGreaterThan(0);
  seen.ok = seen.refused = 0;
};

async function check(call: Call): Promise<void> {
  const before = await snapshot();
  let res: LightMyRequestResponse;
  try {
    res = await gw.app.inject({
      method: call.method as 'POST',
      url: call.url,
      headers: call.headers,
      ...(call.payload === undefined ? {} : { payload: call.payload }),
    });
  } catch (error) {
    // light-my-request refuses some header values itself; nothing reached the server.
    if (error instanceof TypeError && /header/i.test(error.message)) return;
    throw error;
  }
  const context = `${call.method} ${call.url} ${JSON.stringify(call.headers)} ${call.payload?.slice(0, 300)} -> ${res.statusCode} ${res.body.slice(0, 300)}`;
  expect(res.statusCode, context).toBeLessThan(500);
  if (res.statusCode < 300) seen.ok++;
  else seen.refused++;
  if (res.statusCode >= 400) {
    expect(res.headers['content-type'], context).toMatch(/^application\/problem\+json/);
    const problem = res.json();
    expect(problem, context).toMatchObject({
      status: res.statusCode,
      type: expect.any(String),
      title: expect.any(String),
    });
    expect(await snapshot(), `${context}\na 4xx changed the database`).toBe(before);
  }
}

const headersOf = (
  auth: [string, string] | null,
  ct: string,
  payloadText: string | undefined,
): Record<string, string> => ({
  ...(auth ? { [auth[0]]: auth[1] } : {}),
  ...(payloadText === undefined ? {} : { 'content-type': ct }),
});

describe('any request', () => {
  it('to the v1 endpoints: never a 5xx, a problem body on every 4xx, no change on a 4xx', async () => {
    const call = fc.record({
      method: fc.oneof(
        { weight: 5, arbitrary: fc.constant('POST') },
        { weight: 1, arbitrary: fc.constantFrom('GET', 'PUT', 'PATCH', 'DELETE') },
      ),
      url: fc.constantFrom(
        '/api/integrations/v1/leads/',
        '/api/integrations/v1/leads/answers/',
        '/api/integrations/v1/leads',
        '/api/integrations/v1/nothing/',
      ),
      auth: fc.option(
        bearer().map((v): [string, string] => ['authorization', v]),
        { freq: 8 },
      ),
      ct: contentType,
      payload: payload(
        fc.oneof(
          validLead,
          mutatedLead,
          withExtras(leadBody),
          fc.record(
            {
              event_id: maybe(fc.string({ minLength: 1, maxLength: 20 })),
              external_contact_id: maybe(fc.constant('telegram:1')),
              answers: maybe(fc.dictionary(fc.constantFrom('laptop', 'age', 'x'), anyJson)),
            },
            { requiredKeys: [] },
          ),
        ),
        hostile(fc.oneof(validLead, fc.constant({ event_id: 'costly-answers', external_contact_id: 'telegram:1' })), [
          'answers',
          'metadata',
          'event_id',
          'first_name',
          'notes',
          'phone',
          'extra',
        ]),
      ),
    });
    await fc.assert(
      fc.asyncProperty(call, (c) =>
        check({ method: c.method, url: c.url, headers: headersOf(c.auth, c.ct, c.payload), payload: c.payload }),
      ),
      { numRuns: scale.propertyRuns },
    );
    expectBothOutcomes();
  });

  it('to the legacy interface: never a 5xx, a problem body on every 4xx, no change on a 4xx', async () => {
    const legacyBody = fc.record(
      {
        first_name: maybe(fc.constant('Madina')),
        phone: maybe(fc.constantFrom('+998905551234', '905551234', '')),
        stage: maybe(fc.uuid()),
        tag_ids: maybe(fc.array(fc.uuid(), { maxLength: 3 })),
        extra_data: maybe(
          fc.record({ telegram_id: maybe(fc.integer()), course: maybe(fc.constant('python')) }, { requiredKeys: [] }),
        ),
        name: maybe(fc.constantFrom('Laptop bor', 'New tag')),
        color: maybe(fc.constantFrom('#00ff00', 'green')),
        text: maybe(text),
        amount: maybe(fc.oneof(fc.double(), fc.integer(), fc.constant('12.50'))),
      },
      { requiredKeys: [] },
    );
    const call = fc.record({
      route: fc.constantFrom(
        ['POST', '/api/bots/api/leads/'],
        ['GET', '/api/bots/api/leads/'],
        ['GET', '/api/bots/api/leads/:id/'],
        ['PATCH', '/api/bots/api/leads/:id/'],
        ['PUT', '/api/bots/api/leads/:id/'],
        ['DELETE', '/api/bots/api/leads/:id/'],
        ['POST', '/api/bots/api/leads/:id/move/'],
        ['POST', '/api/bots/api/leads/:id/comments/'],
        ['POST', '/api/bots/api/leads/:id/payments/'],
        ['POST', '/api/bots/api/tags/create/'],
        ['GET', '/api/bots/api/tags/'],
        ['GET', '/api/bots/api/info/'],
        ['GET', '/api/bots/api/unknown/'],
      ),
      id: fc.oneof(fc.constant('SEED'), uuidish),
      query: fc.constantFrom(
        '',
        '?page=2',
        '?page=-1',
        '?page_size=100000',
        '?page=abc',
        '?page=101&page_size=100',
        '?page=100&page_size=100',
        '?after=zzz',
        '?before=MjAyNi0wMS0wMSB4',
      ),
      auth: fc.option(
        fc
          .oneof(
            { weight: 4, arbitrary: fc.constant(LEGACY_KEY) },
            { weight: 1, arbitrary: fc.constantFrom('', v1Key, `${LEGACY_KEY} `) },
            { weight: 1, arbitrary: printable },
          )
          .map((v): [string, string] => ['x-bot-api-key', v]),
        { freq: 8 },
      ),
      ct: contentType,
      payload: payload(
        withExtras(legacyBody),
        hostile(
          fc.record({
            first_name: fc.constant('Madina'),
            phone: fc.constantFrom('+998905551234', '905551239'),
            extra_data: fc.constant({ telegram_id: 77 }),
          }),
          ['extra_data', 'tag_ids', 'amount', 'text', 'name', 'stage', 'first_name', 'unknown'],
        ),
      ),
    });
    await fc.assert(
      fc.asyncProperty(call, (c) => {
        const url = c.route[1].replace(':id', c.id === 'SEED' ? leadId : c.id) + c.query;
        return check({ method: c.route[0], url, headers: headersOf(c.auth, c.ct, c.payload), payload: c.payload });
      }),
      { numRuns: scale.propertyRuns },
    );
    expectBothOutcomes();
  });

  it('to the admin API: never a 5xx, a problem body on every 4xx, no change on a 4xx', async () => {
    const call = fc.record({
      route: fc.constantFrom(
        ['GET', '/admin/v1/integrations'],
        ['POST', '/admin/v1/integrations/:integration/keys'],
        ['POST', '/admin/v1/integrations/:integration/keys/import'],
        ['POST', '/admin/v1/integrations/:integration/switch-off'],
        ['POST', '/admin/v1/integrations/:integration/rollback'],
        ['GET', '/admin/v1/integrations/:integration/report'],
        ['GET', '/admin/v1/integrations/:integration/audit'],
        ['GET', '/admin/v1/integrations/:integration/review'],
        ['GET', '/admin/v1/leads'],
        ['GET', '/admin/v1/leads/:id'],
        ['POST', '/admin/v1/leads/:id/move'],
        ['POST', '/admin/v1/leads/:id/close'],
        ['PUT', '/admin/v1/leads/:id/fields/:field'],
        ['DELETE', '/admin/v1/leads/:id'],
      ),
      integration: fc.oneof(
        fc.constantFrom('brightpath:telegram-bot', 'brightpath:nothing', 'nowhere:x', ''),
        printable.map(encodeURIComponent),
      ),
      id: fc.oneof(fc.constant('SEED'), uuidish),
      field: fc.constantFrom('laptop', 'applicant_age', 'nothing', '%00'),
      query: fc.constantFrom(
        '',
        '?workspace=brightpath',
        '?workspace=nowhere',
        '?field=laptop:Present',
        '?field=:::',
        '?limit=-5',
        '?cursor=zzz',
        `?workspace=brightpath&${Array(1000).fill('field=laptop:Present').join('&')}`,
        `?workspace=brightpath&${Array(20).fill('field=days:mon,wed,fri,sat').join('&')}`,
        '?workspace=brightpath&field=age:12345678901234567890',
      ),
      auth: fc.option(
        fc
          .oneof(
            { weight: 3, arbitrary: fc.constant(`Bearer ${ADMIN_TOKEN}`) },
            { weight: 1, arbitrary: fc.constantFrom(`Bearer ${v1Key}`, 'Bearer', `Bearer ${ADMIN_TOKEN}x`) },
            { weight: 1, arbitrary: printable },
          )
          .map((v): [string, string] => ['authorization', v]),
        { freq: 8 },
      ),
      ct: contentType,
      payload: payload(
        withExtras(
          fc.record(
            {
              key: maybe(fc.constantFrom('imported-key-0123456789', '')),
              actor: maybe(fc.constant('ops')),
              reason: maybe(text),
              force: maybe(fc.boolean()),
              stage: maybe(fc.uuid()),
              value: anyJson,
              outcome: maybe(fc.constantFrom('won', 'lost')),
            },
            { requiredKeys: [] },
          ),
        ),
        hostile(fc.constant({ written_by: { kind: 'import', ref: 'csv' }, reason: 'r' }), [
          'value',
          'reason',
          'key',
          'stage',
          'written_by',
          'actor',
        ]),
      ),
    });
    await fc.assert(
      fc.asyncProperty(call, (c) => {
        // Changes that succeed are allowed; they must not become 5xx. Deleting the seed lead would
        // starve the other runs, so DELETE only aims at other ids.
        const id =
          c.id === 'SEED' && c.route[0] !== 'DELETE'
            ? leadId
            : c.id === 'SEED'
              ? '00000000-0000-0000-0000-000000000000'
              : c.id;
        const url =
          c.route[1].replace(':integration', c.integration).replace(':id', id).replace(':field', c.field) + c.query;
        return check({ method: c.route[0], url, headers: headersOf(c.auth, c.ct, c.payload), payload: c.payload });
      }),
      { numRuns: scale.propertyRuns },
    );
    expectBothOutcomes();
  });
});
