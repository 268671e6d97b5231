// A legacy call's redaction for the porting guide: nothing a person typed or is survives it, the
// rules' configuration does, and a sample is at most 8 KiB. Its Markdown rendering.
import { describe, expect, it } from 'vitest';
import { createRulesHolder } from '../../src/rules/loader.js';
import { EXAMPLE_RULES } from '../helper.js';
import {
  placeholderOf,
  redactionRules,
  redactLegacyCall,
  SAMPLE_MAX_BYTES,
  TRUNCATED,
} from '../../src/porting/redact.js';
import { buildGuide } from '../../src/porting/guide.js';
import {
  LegacyCommentSchema,
  LegacyLeadCreateSchema,
  LegacyLeadUpdateSchema,
  LegacyMoveSchema,
  LegacyPaymentSchema,
  LegacyTagCreateSchema,
} from '../../src/legacy/schemas.js';
import { guideMarkdown } from '../../src/porting/markdown.js';

const integration = createRulesHolder(EXAMPLE_RULES).current().findIntegration('brightpath:telegram-bot')!;
const rules = redactionRules(integration);
const TAG = '31c28675-2517-52ee-84d0-bc4c834ead87';

const call = (body: unknown, routeUrl = '/api/bots/api/leads/', query: Record<string, unknown> | null = null) =>
  redactLegacyCall({ method: 'POST', routeUrl, query, body, status: 201 }, rules);

describe('redacting a legacy call', () => {
  const personal = {
    first_name: 'Gulnora',
    last_name: "O'tkirova",
    phone: '+998 (93) 765-43-21',
    email: 'gulnora@example.uz',
    notes: 'Call after 18:00, her brother Sanjar answers',
    source: 'ref_sanjar',
    tag_ids: [TAG],
    stage: '5d0f3e7c-4b7c-5a43-9b0e-2d8d4d3e1a11',
    extra_data: {
      telegram_id: 998877,
      username: 'gulnora_o',
      course: 'Python',
      age: 19,
      passport: 'AB1234567',
      mobile: '93 765 43 21',
      contact: { email: 'other@example.com', home: '712345678' },
      consent: true,
      referrer: null,
    },
    nickname: 'Gulya',
  };

  it('keeps a member name only when it is a plain identifier: a bot that keys its data by the person shows <member-N>', () => {
    const sample = call(
      {
        first_name: 'Ivan',
        extra_data: {
          course: 'Python',
          'Ivan Petrov +7 916 123-45-67': 'x',
          contacts: { 'ivan.petrov@mail.ru': true, '998901234567': 1, note: 'n' },
        },
      },
      '/api/bots/api/leads/',
      { 'ivan.petrov@mail.ru': '', page: '2' },
    );
    const text = JSON.stringify(sample);
    for (const personal of ['Ivan', 'Petrov', '916', 'ivan.petrov', 'mail.ru', '998901234567'])
      expect(text).not.toContain(personal);
    expect(sample.body).toEqual({
      first_name: '<name>',
      extra_data: {
        course: 'Python',
        '<member-2>': '<text>',
        contacts: { '<member-1>': true, '<member-2>': '<number>', note: '<text>' },
      },
    });
    expect(sample.query).toEqual({ '<member-1>': '<value>', page: '<value>' });
  });

  it("finding 3: a person's name or handle as a member name is <member-N>; a field's name, the legacy API's members and the rules' names are kept", () => {
    const people = ['Aziza', 'aziza_rahimova', 'jasur_k', 'AzizaRahimova', 'jasur.k', 'Sanjar-92', 'madina_id'];
    const fields = ['utm_source', 'chat_id', 'tgUserId', 'favourite_colour', 'question_2', 'page-size', 'x'];
    const sample = call(
      {
        first_name: 'Ivan',
        stage: TAG,
        ...Object.fromEntries([...people, ...fields].map((n) => [n, 'v'])),
        extra_data: { course: 'python', age: 20, ...Object.fromEntries(people.map((n) => [n, 1])) },
      },
      '/api/bots/api/leads/',
      Object.fromEntries(people.map((n) => [n, ''])),
    );
    const text = JSON.stringify(sample);
    for (const name of ['Aziza', 'aziza', 'rahimova', 'Rahimova', 'jasur', 'Sanjar', 'madina'])
      expect(text).not.toContain(name);
    const body = sample.body as Record<string, unknown>;
    expect(Object.keys(body)).toEqual([
      'first_name',
      'stage',
      ...people.map((_, i) => `<member-${i + 3}>`),
      ...fields,
      'extra_data',
    ]);
    expect(Object.keys(body.extra_data as object)).toEqual([
      'course',
      'age',
      ...people.map((_, i) => `<member-${i + 3}>`),
    ]);
    expect(Object.keys(sample.query)).toEqual(people.map((_, i) => `<member-${i + 1}>`));
    // Every member of the legacy API's own writes is a field's name.
    for (const schema of [
      LegacyLeadCreateSchema,
      LegacyLeadUpdateSchema,
      LegacyTagCreateSchema,
      LegacyCommentSchema,
      LegacyPaymentSchema,
      LegacyMoveSchema,
    ]) {
      const names = Object.keys(schema.shape);
      expect(Object.keys(call(Object.fromEntries(names.map((n) => [n, null]))).body as object)).toEqual(names);
    }
  });

  it('finding 3: a sample kept under the laxer rule of before shows its names in the guide as the rule of today does', () => {
    const at = '2026-11-26T10:00:00.000Z';
    const stored = {
      method: 'POST',
      path: '/api/bots/api/leads/',
      query: { jasur_k: '<value>' },
      body: {
        first_name: '<name>',
        aziza_rahimova: '<text>',
        '<member-3>': '<text>',
        extra_data: { course: 'python', Aziza: '<number>' },
        [TRUNCATED]: true,
      },
      status: 201,
      truncated: true,
    };
    const guide = buildGuide({
      integration,
      state: 'legacy',
      now: new Date(at),
      usage: [
        { route: 'POST /api/bots/api/leads/', interface: 'legacy', calls: 1, lastSeen: at, okCalls: 1, lastOk: at },
      ],
      samples: [{ integrationId: integration.id, route: 'POST /api/bots/api/leads/', at, sample: stored }],
      ignored: [],
      createdTags: new Map(),
    });
    expect(guide.routes[0]!.sample!.call).toEqual({
      ...stored,
      query: { '<member-1>': '<value>' },
      body: {
        first_name: '<name>',
        '<member-2>': '<text>',
        '<member-3>': '<text>',
        extra_data: { course: 'python', '<member-2>': '<number>' },
        [TRUNCATED]: true,
      },
    });
    expect(JSON.stringify(guide)).not.toMatch(/aziza|jasur/i);
  });

  it('leaves no name, phone, e-mail, free text or id of the person, in any member or depth', () => {
    const text = JSON.stringify(call(personal, '/api/bots/api/leads/:id/', { search: 'Gulnora', page: '2' }));
    for (const value of [
      'Gulnora',
      'tkirova',
      '765',
      '43-21',
      'example',
      '18:00',
      'Sanjar',
      'sanjar',
      '998877',
      'gulnora_o',
      'AB1234567',
      '712345678',
      'Gulya',
      '19',
    ]) {
      expect(text).not.toContain(value);
    }
  });

  it('gives each value a typed placeholder and keeps member names, booleans, catalog ids and the values the rules map', () => {
    const redacted = call(personal, '/api/bots/api/leads/:id/', { search: 'Gulnora' });
    expect(redacted).toMatchObject({
      method: 'POST',
      path: '/api/bots/api/leads/<id>/',
      query: { search: '<value>' },
      status: 201,
      truncated: false,
    });
    expect(redacted.body).toEqual({
      first_name: '<name>',
      last_name: '<name>',
      phone: '<phone>',
      email: '<email>',
      notes: '<text>',
      source: '<source>',
      tag_ids: [TAG],
      stage: '5d0f3e7c-4b7c-5a43-9b0e-2d8d4d3e1a11',
      extra_data: {
        // A person id sent as a number: its placeholder says so, and the guide's examples write it without quotes.
        telegram_id: '<number-id>',
        username: '<text>',
        course: 'Python',
        age: '<number>',
        passport: '<text>',
        mobile: '<phone>',
        contact: { email: '<email>', home: '<phone>' },
        consent: true,
        referrer: null,
      },
      nickname: '<text>',
    });
  });

  it('names the kind of a lone value', () => {
    expect(
      [12, '12', '123456789', '3.5', '+1 (555) 010-9999', 'a@b', 'hello', false, null, [1]].map(placeholderOf),
    ).toEqual(['<number>', '<id>', '<phone>', '<number>', '<phone>', '<email>', '<text>', false, null, '<value>']);
  });

  it('keeps a mapped value only where the rules map it: the same word elsewhere is text', () => {
    expect(call({ extra_data: { course: 'frontend', hobby: 'frontend', age: 'python' } }).body).toEqual({
      extra_data: { course: 'frontend', hobby: '<text>', age: '<text>' },
    });
  });

  it('cuts a large call to its first members within 8 KiB, marked, and bounds members, items and depth', () => {
    const wide = Object.fromEntries(
      Array.from({ length: 40 }, (_, i) => [
        `member_${i}_${'x'.repeat(60)}`,
        { a: { b: { c: { d: 'deep' } } }, list: Array.from({ length: 60 }, () => 'v') },
      ]),
    );
    const redacted = call(wide);
    expect(redacted.truncated).toBe(true);
    expect(Buffer.byteLength(JSON.stringify(redacted.body))).toBeLessThanOrEqual(SAMPLE_MAX_BYTES);
    const body = redacted.body as Record<string, { a: unknown; list: unknown[] }>;
    expect(body[TRUNCATED]).toBe(true);
    const [first] = Object.entries(body);
    expect(first![0].length).toBeLessThanOrEqual(64);
    expect(first![1].list).toHaveLength(51);
    expect(first![1].list.at(-1)).toBe(TRUNCATED);
    expect(first![1].a).toEqual({ b: { c: '<value>' } });
  });
});

describe('the guide in Markdown', () => {
  it('shows the fix-by date, each route with its count, the sample beside its v1 curl, and the lists of calls the bot stops making', () => {
    const at = '2026-11-26T10:00:00.000Z';
    const route = (r: string, calls: number) => ({
      route: r,
      interface: 'legacy' as const,
      calls,
      lastSeen: at,
      okCalls: calls,
      lastOk: at,
    });
    const sample = call({
      first_name: 'Gulnora',
      phone: '+998937654321',
      extra_data: { telegram_id: 5, course: 'python' },
      tag_ids: [TAG],
    });
    const guide = buildGuide({
      integration,
      state: 'migrating',
      now: new Date(at),
      usage: [
        route('POST /api/bots/api/leads/', 12),
        route('GET /api/bots/api/boards/', 3),
        route('POST /api/bots/api/leads/:id/move/', 2),
        { ...route('POST /api/integrations/v1/leads/', 9), interface: 'v1' },
      ],
      samples: [{ integrationId: integration.id, route: 'POST /api/bots/api/leads/', at, sample: { ...sample } }],
      ignored: [{ field: 'stage', calls: 4, lastSeen: at }],
      createdTags: new Map([[TAG, 'Laptop bor']]),
    });
    const md = guideMarkdown(guide);
    expect(md).toContain('**Fix by 2027-03-01**');
    expect(md).toContain(
      '| POST /api/bots/api/leads/ | 12 | 2026-11-26T10:00:00.000Z | POST /api/integrations/v1/leads/ |',
    );
    expect(md).not.toContain('POST /api/integrations/v1/leads/ | 9');
    expect(md).toContain(`curl -X POST '<gateway>/api/integrations/v1/leads/'`);
    expect(md).toContain(`"external_contact_id":"telegram:<id>"`);
    expect(md).toContain(`"answers":{"laptop":"yes","course":"python"}`);
    expect(md).toMatch(/## Not needed on v1\n\n.*\n\n- GET \/api\/bots\/api\/boards\/: 3 calls/);
    expect(md).toMatch(/## Not available on v1\n\n.*\n\n- POST \/api\/bots\/api\/leads\/:id\/move\/: 2 calls/);
    expect(md).toContain(
      '| stage | 4 | 2026-11-26T10:00:00.000Z | Set by the integration settings (lead_defaults); drop it. |',
    );
    expect(md).not.toContain('Gulnora');
  });
});
