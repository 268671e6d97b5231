// Bounded answers: at most 200 per request, keys that do not fit reported one by one, numbers never rounded.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANSWER_KEY_MAX_CHARS, ANSWERS_MAX } from '../../src/answers/schemas.js';
import { LEGACY_WRITE_MAX_VALUES } from '../../src/legacy/schemas.js';
import {
  IGNORED_NAME_MAX_CHARS,
  IGNORED_NAMES_MAX_PER_INTEGRATION,
  IGNORED_NAMES_MAX_PER_REQUEST,
} from '../../src/migration/usage.js';
import { startGateway, type Gateway } from '../helper.js';

let gw: Gateway;
let key: string;
const LEGACY_KEY = 'answers-bounds-legacy-key-0123456789';

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
});
afterAll(() => gw.close());

const post = (
  url: string,
  payload: string | object,
  headers: Record<string, string> = { authorization: `Bearer ${key}` },
) =>
  gw.app.inject({
    method: 'POST',
    url,
    headers: { ...headers, 'content-type': 'application/json' },
    payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
  });
const answersUrl = '/api/integrations/v1/leads/answers/';
const leadsUrl = '/api/integrations/v1/leads/';
const legacy = { 'x-bot-api-key': LEGACY_KEY };
const many = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 'x']));

describe('the number of answers in one request', () => {
  it(`answers: ${ANSWERS_MAX} pass, ${ANSWERS_MAX + 1} are a 422 naming the path and the limit`, async () => {
    expect(
      (await post(answersUrl, { event_id: 'n-ok', external_contact_id: 'telegram:1', answers: many(ANSWERS_MAX) }))
        .statusCode,
    ).toBe(200);
    const before = await gw.inspect.answers.count();
    const res = await post(answersUrl, {
      event_id: 'n-over',
      external_contact_id: 'telegram:1',
      answers: many(ANSWERS_MAX + 1),
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().errors).toEqual([{ path: '/answers', message: `must hold at most ${ANSWERS_MAX} answers` }]);
    expect(await gw.inspect.answers.count()).toBe(before);
  });

  it('a lead submission with too many answers is a 422 at /answers', async () => {
    const res = await post(leadsUrl, { event_id: 'n-lead', first_name: 'A', answers: many(ANSWERS_MAX + 1) });
    expect(res.statusCode).toBe(422);
    expect(res.json().errors[0]).toMatchObject({
      path: '/answers',
      message: expect.stringContaining(`at most ${ANSWERS_MAX}`),
    });
  });

  it('legacy tag_ids and extra_data that could make too many answers are a 422 at their path', async () => {
    const tags = await post(
      '/api/bots/api/leads/',
      { first_name: 'A', tag_ids: Array.from({ length: ANSWERS_MAX + 1 }, () => 'x') },
      legacy,
    );
    expect(tags.statusCode).toBe(422);
    expect(tags.json().errors[0]).toMatchObject({
      path: '/tag_ids',
      message: expect.stringContaining(`${ANSWERS_MAX}`),
    });
    const data = await post('/api/bots/api/leads/', { first_name: 'A', extra_data: many(ANSWERS_MAX + 1) }, legacy);
    expect(data.statusCode).toBe(422);
    expect(data.json().errors[0]).toMatchObject({
      path: '/extra_data',
      message: expect.stringContaining(`${ANSWERS_MAX}`),
    });
  });
});

describe('answer keys that do not fit', () => {
  const long = 'k'.repeat(ANSWER_KEY_MAX_CHARS + 1);

  it('are invalid one by one on the answers endpoint; the other answers are written and stored', async () => {
    const res = await post(answersUrl, {
      event_id: 'keys-1',
      external_contact_id: 'telegram:1',
      answers: { '': 'x', [long]: 'y', age: 20, ['k'.repeat(ANSWER_KEY_MAX_CHARS)]: 'z' },
    });
    expect(res.statusCode).toBe(200);
    const answers = res.json().answers;
    expect(answers.written).toEqual(['age']);
    expect(answers.unmapped).toEqual(['k'.repeat(ANSWER_KEY_MAX_CHARS)]);
    expect(answers.invalid).toEqual([
      { key: '', error: 'an answer key must not be empty' },
      {
        key: long,
        error: `an answer key takes at most ${ANSWER_KEY_MAX_CHARS} characters (this one has ${long.length})`,
      },
    ]);
    expect(await gw.inspect.answers.count({ outcome: 'invalid', key: { in: ['', long] } })).toBe(2);
  });

  it('are invalid in a lead submission, which succeeds', async () => {
    const res = await post(leadsUrl, {
      event_id: 'keys-2',
      first_name: 'Kamola',
      phone: '+998901110000',
      answers: { '': 1, course: 'python' },
    });
    expect(res.statusCode).toBe(201);
    expect(res.json().answers).toMatchObject({ written: ['course'], invalid: [{ key: '' }] });
  });
});

describe('numbers a JavaScript number cannot carry exactly', () => {
  it('are invalid with an error that says to send a string; the other answers are written', async () => {
    const res = await post(
      answersUrl,
      '{"event_id":"num-1","external_contact_id":"telegram:1","answers":{"age":12345678901234567890,"goal":1e-400,"trial_date":1e400,"course":"python","call_back_at":0.1000000000000000000001}}',
    );
    expect(res.statusCode).toBe(200);
    const answers = res.json().answers;
    expect(answers.written).toEqual(['course']);
    expect(answers.invalid.map((i: { key: string }) => i.key)).toEqual(['age', 'goal', 'trial_date', 'call_back_at']);
    for (const i of answers.invalid) expect(i.error).toContain('send it as a string');
    // Sent as a string, the same value is written exactly.
    const exact = await post(answersUrl, {
      event_id: 'num-2',
      external_contact_id: 'telegram:1',
      answers: { age: '12345678901234567890' },
    });
    expect(exact.json().answers.written).toEqual(['age']);
  });

  it('are invalid when they come through a legacy data key', async () => {
    const created = await post(
      '/api/bots/api/leads/',
      '{"first_name":"Bek","phone":"+998907771111","extra_data":{"telegram_id":77,"age":9007199254740993,"course":"python"}}',
      legacy,
    );
    expect(created.statusCode).toBe(201);
    const fields = created.json().custom_field_values.map((v: { decimal_value: string | null }) => v.decimal_value);
    expect(fields).not.toContain('9007199254740992');
    expect(
      await gw.inspect.answers.count({
        leadId: created.json().id,
        key: 'age',
        outcome: 'invalid',
        error: { like: '%send it as a string%' },
      }),
    ).toBe(1);
  });

  it('are invalid through a legacy data key when only the text shows it (a fraction a double rounds)', async () => {
    // 20.0000000000000000001 parses to exactly 20: only the parser's note of the text can tell.
    const created = await post(
      '/api/bots/api/leads/',
      '{"first_name":"Kamola","phone":"+998907772222","extra_data":{"telegram_id":78,"age":20.0000000000000000001}}',
      legacy,
    );
    expect(created.statusCode).toBe(201);
    expect(
      await gw.inspect.answers.count({
        leadId: created.json().id,
        key: 'age',
        outcome: 'invalid',
        error: { like: '%send it as a string%' },
      }),
    ).toBe(1);
  });
});

describe('ignored legacy members counted for the migration report', () => {
  const report = async () =>
    (await gw.admin('GET', '/admin/v1/integrations/brightpath:telegram-bot/report')).json().ignored_legacy_fields as {
      field: string;
    }[];
  const body = (phone: string) => {
    const b: Record<string, unknown> = { first_name: 'Unknown', phone };
    // As many as the route takes in one body (its values, the two fields among them).
    for (let i = 0; i < LEGACY_WRITE_MAX_VALUES - 2; i++) b[`member_${i}_${'x'.repeat(i < 5 ? 100 : 0)}`] = 1;
    return b;
  };

  it('are not counted for a refused request', async () => {
    const before = (await report()).length;
    expect((await post('/api/bots/api/leads/', body('12'), legacy)).statusCode).toBe(422);
    expect((await report()).length).toBe(before);
  });

  it('are counted for a request that succeeded, at most a fixed number of names, each cut to a fixed length', async () => {
    const before = (await report()).length;
    expect((await post('/api/bots/api/leads/', body('+998905550000'), legacy)).statusCode).toBe(201);
    const fields = await report();
    expect(fields.length - before).toBe(IGNORED_NAMES_MAX_PER_REQUEST);
    expect(Math.max(...fields.map((f) => f.field.length))).toBe(IGNORED_NAME_MAX_CHARS);
  });

  it('keep at most a fixed number of names per integration; known names go on counting', async () => {
    const distinct = (n: number) => {
      const b: Record<string, unknown> = { first_name: 'Many', phone: `+99890${String(600000 + n).padStart(7, '0')}` };
      for (let i = 0; i < IGNORED_NAMES_MAX_PER_REQUEST; i++) b[`batch_${n}_${i}`] = 1;
      return b;
    };
    const requests = Math.ceil(IGNORED_NAMES_MAX_PER_INTEGRATION / IGNORED_NAMES_MAX_PER_REQUEST) + 2;
    for (let n = 0; n < requests; n++)
      expect((await post('/api/bots/api/leads/', distinct(n), legacy)).statusCode).toBe(201);
    const fields = (await gw.admin('GET', '/admin/v1/integrations/brightpath:telegram-bot/report')).json()
      .ignored_legacy_fields as { field: string; calls: number }[];
    expect(fields).toHaveLength(IGNORED_NAMES_MAX_PER_INTEGRATION);
    const known = fields.find((f) => f.field === 'batch_0_0')!;
    expect((await post('/api/bots/api/leads/', { ...distinct(0), phone: '+998906999999' }, legacy)).statusCode).toBe(
      201,
    );
    const again = (await gw.admin('GET', '/admin/v1/integrations/brightpath:telegram-bot/report')).json()
      .ignored_legacy_fields as { field: string; calls: number }[];
    expect(again.find((f) => f.field === 'batch_0_0')!.calls).toBe(known.calls + 1);
    expect(again).toHaveLength(IGNORED_NAMES_MAX_PER_INTEGRATION);
  });
});
