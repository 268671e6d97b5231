// The JSON parser: nesting depth refused before any recursive code runs, numbers JavaScript rounds noted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  isExactNumber,
  JSON_MAX_DEPTH,
  JSON_MAX_STRING_CHARS,
  JSON_MAX_VALUES,
  MAX_INEXACT_NOTED,
  scanJson,
} from '../../src/http/json-body.js';
import { ADMIN_TOKEN, startGateway, type Gateway } from '../helper.js';

const nest = (n: number, inner = '1') => '{"a":'.repeat(n) + inner + '}'.repeat(n);

describe('scanJson', () => {
  it('counts depth through strings holding brackets, quotes and escapes', () => {
    expect(scanJson('{"a":"[[[{{{\\"[[[","b":[{"c":"\\\\"}]}', { maxDepth: 3 }).tooDeepAt).toBeNull();
    expect(scanJson('{"a":"\\\\","b":[[[1]]]}', { maxDepth: 3 }).tooDeepAt).toBe('/b/0/0');
    expect(scanJson(nest(32)).tooDeepAt).toBeNull();
    expect(scanJson(nest(33)).tooDeepAt).toBe(`/${Array(32).fill('a').join('/')}`);
  });

  it('names the numbers a JavaScript number does not hold exactly, by JSON Pointer', () => {
    const scan = scanJson(
      '{"answers":{"big":12345678901234567890,"a/b":1e400,"tiny":1e-400,"ok":12.5,"e":1.5e3},"list":[0, 9007199254740993]}',
    );
    expect(scan.inexactNumbers).toEqual(['/answers/big', '/answers/a~1b', '/answers/tiny', '/list/1']);
    for (const token of [
      '0',
      '-0',
      '12.50',
      '1e21',
      '0.1',
      '-3.25e-7',
      '9007199254740991',
      '123456789012345',
      '1.0000',
    ])
      expect(isExactNumber(token), token).toBe(true);
    for (const token of [
      '9007199254740993',
      '1e400',
      '-1e400',
      '1e-400',
      '0.10000000000000000001',
      '123456789012345678',
    ])
      expect(isExactNumber(token), token).toBe(false);
  });
});

describe('scanJson stops at the first count past its limit', () => {
  const answers = { member: 'answers', max: 3, message: 'at most 3' };
  const object = (n: number) =>
    `{${Array.from({ length: n }, (_, i) => `"k${i}":${i % 2 ? 'true' : '"v"'}`).join(',')}}`;

  it('counts every value (members, array elements, literals) of the body, not the body itself', () => {
    expect(scanJson('{"a":[1,"x",null,{"b":false}]}', { maxValues: 6 }).refusal).toBeNull();
    expect(scanJson('{"a":[1,"x",null,{"b":false}]}', { maxValues: 5 }).refusal).toEqual({
      kind: 'too-many-values',
      at: '/a/3/b',
    });
    expect(scanJson(`{"a":${object(JSON_MAX_VALUES - 1)}}`).refusal).toBeNull();
    expect(scanJson(`{"a":${object(JSON_MAX_VALUES)}}`).refusal).toEqual({
      kind: 'too-many-values',
      at: `/a/k${JSON_MAX_VALUES - 1}`,
    });
  });

  it('counts the members of a counted member of the body, named as the schema names it', () => {
    expect(scanJson(`{"answers":${object(3)},"other":${object(9)}}`, { counted: [answers] }).refusal).toBeNull();
    expect(scanJson(`{"answers":${object(4)}}`, { counted: [answers] }).refusal).toEqual({
      kind: 'too-many-members',
      at: '/answers',
      counted: answers,
    });
    expect(scanJson('{"answers":[1,2,[4,5,6,7]]}', { counted: [answers] }).refusal).toBeNull();
    expect(scanJson('{"answers":[1,2,3,4]}', { counted: [answers] }).refusal).toMatchObject({
      kind: 'too-many-members',
      at: '/answers',
    });
    // Deeper down, or spelled with an escape, it is not the member: the schema counts that one.
    expect(scanJson(`{"x":{"answers":${object(9)}}}`, { counted: [answers] }).refusal).toBeNull();
    expect(scanJson(`{"answ\\u0065rs":${object(9)}}`, { counted: [answers] }).refusal).toBeNull();
  });

  it('refuses a string, key or value, longer than its limit', () => {
    const long = 'x'.repeat(JSON_MAX_STRING_CHARS);
    expect(scanJson(`{"a":"${long}","${long}":1}`).refusal).toBeNull();
    expect(scanJson(`{"a":"${long}x"}`).refusal).toEqual({ kind: 'string-too-long', at: '/a' });
    expect(scanJson(`{"a":{"${long}x":1}}`).refusal).toEqual({ kind: 'string-too-long', at: `/a/${'x'.repeat(64)}…` });
  });
});

let gw: Gateway;
let key: string;
const LEGACY_KEY = 'json-body-legacy-key-0123456789';

beforeAll(async () => {
  gw = await startGateway();
  key = await gw.issueKey('brightpath:telegram-bot');
  await gw.admin('POST', '/admin/v1/integrations/brightpath:telegram-bot/keys/import', { key: LEGACY_KEY });
});
afterAll(() => gw.close());

describe('the scan of a hostile body stays linear', () => {
  // Regression: every inexact number had its whole path rebuilt by re-parsing each key above it, and
  // kept; long keys over thousands of 1e999 took seconds and gigabytes, before any key was checked.
  it('notes no number under a long key or deep down, and at most a bounded number of them', () => {
    const longKey = 'k'.repeat(30_000);
    let deep = `[${Array(300).fill('1e999').join(',')}]`;
    for (let i = 0; i < 30; i++) deep = `{"${longKey}":${deep}}`;
    expect(scanJson(deep).inexactNumbers).toEqual([]);
    const underLongKey = `{"${longKey}":{"a":1e999,"b":1e999}}`;
    expect(scanJson(underLongKey).inexactNumbers).toEqual([]);
    const many = `{"answers":{${Array.from({ length: 5_000 }, (_, i) => `"k${i}":1e999`).join(',')}}}`;
    const noted = scanJson(many).inexactNumbers;
    expect(noted).toHaveLength(MAX_INEXACT_NOTED);
    expect(noted[0]).toBe('/answers/k0');
    expect(scanJson('{"a":{"b":{"c":1e999}}}').inexactNumbers).toEqual([]);
  });

  it('cuts a long key in the pointer of a too-deep body', () => {
    let body = '1';
    for (let i = 0; i < JSON_MAX_DEPTH + 1; i++) body = `{"${'x'.repeat(5_000)}":${body}}`;
    const at = scanJson(body).tooDeepAt!;
    expect(at.length).toBeLessThan(JSON_MAX_DEPTH * 80);
    expect(at.startsWith(`/${'x'.repeat(64)}…/`)).toBe(true);
  });
});

describe('a body nested deeper than the limit', () => {
  // Before the limit: depth 2,000 (a 12 KB body) was accepted and its resend with other data was a
  // 500 (the 409 path diff overflowed the stack); depth 2,400 (14 KB) was a 500 on the first send.
  const deep = `{"event_id":"deep-1","first_name":"A","external_contact_id":"telegram:1","metadata":{"x":${nest(2400)}}}`;
  const routes: [string, string, Record<string, string>][] = [
    ['POST', '/api/integrations/v1/leads/', {}],
    ['POST', '/api/integrations/v1/leads/answers/', {}],
    ['POST', '/api/bots/api/leads/', { 'x-bot-api-key': LEGACY_KEY }],
    [
      'PUT',
      '/admin/v1/leads/00000000-0000-0000-0000-000000000000/fields/goal',
      { authorization: `Bearer ${ADMIN_TOKEN}` },
    ],
  ];

  it.each(routes)('%s %s answers 422 naming the limit, and nothing is stored', async (method, url, headers) => {
    const before = (await gw.inspect.submissions.count()) + (await gw.inspect.leads.count());
    const res = await gw.app.inject({
      method: method as 'POST',
      url,
      headers: { authorization: `Bearer ${key}`, ...headers, 'content-type': 'application/json' },
      payload: deep,
    });
    expect(res.statusCode).toBe(422);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    const problem = res.json();
    expect(problem).toMatchObject({ code: 'nesting-too-deep', max_depth: JSON_MAX_DEPTH });
    expect(problem.detail).toContain(`${JSON_MAX_DEPTH} levels`);
    expect(problem.errors[0].path).toMatch(/^\/metadata\/x\/a\/a/);
    expect((await gw.inspect.submissions.count()) + (await gw.inspect.leads.count())).toBe(before);
  });

  it('a body at the limit is accepted, and a resend with other data is a 409 listing the paths', async () => {
    const body = (name: string) =>
      `{"event_id":"deep-ok","first_name":"${name}","metadata":{"x":${nest(JSON_MAX_DEPTH - 2)}}}`;
    const send = (payload: string) =>
      gw.app.inject({
        method: 'POST',
        url: '/api/integrations/v1/leads/',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        payload,
      });
    expect((await send(body('A'))).statusCode).toBe(201);
    const conflict = await send(body('B'));
    expect(conflict.statusCode).toBe(409);
    expect(conflict.json().paths).toEqual(['/first_name']);
  });

  it('malformed JSON stays a 400 and __proto__ stays refused', async () => {
    const send = (payload: string) =>
      gw.app.inject({
        method: 'POST',
        url: '/api/integrations/v1/leads/',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        payload,
      });
    expect((await send('{"event_id": "x",')).json()).toMatchObject({ status: 400, code: 'malformed-json' });
    expect((await send('{"event_id":"p","first_name":"A","__proto__":{"x":1}}')).json()).toMatchObject({
      status: 400,
      code: 'malformed-json',
    });
    expect((await send('')).json()).toMatchObject({ status: 400, code: 'malformed-json' });
  });
});
