// Every error is an RFC 9457 problem with a request id that matches the X-Request-Id header.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { buildApp } from '../src/app.js';
import { inspect } from './support/inspect.js';
import { openTestStore } from './support/store.js';
import { createRulesHolder } from '../src/rules/loader.js';
import { ADMIN_TOKEN, EXAMPLE_RULES, recordForContract, startGateway, type Gateway } from './helper.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let gw: Gateway;
let key: string;

beforeAll(async () => {
  gw = await startGateway();
  key = await gw.issueKey('brightpath:telegram-bot');
});
afterAll(() => gw.close());

const url = '/api/integrations/v1/leads/';
const auth = () => ({ authorization: `Bearer ${key}` });

function expectProblem(res: LightMyRequestResponse, status: number, code: string) {
  expect(res.statusCode).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const problem = res.json();
  expect(problem).toMatchObject({
    type: `urn:lead-gateway:problem:${code}`,
    status,
    code,
    title: expect.any(String),
    detail: expect.any(String),
  });
  expect(problem.request_id).toBe(res.headers['x-request-id']);
  return problem;
}

describe('problem responses', () => {
  it('400 for malformed JSON', async () => {
    const res = await gw.app.inject({
      method: 'POST',
      url,
      headers: { ...auth(), 'content-type': 'application/json' },
      payload: '{"event_id": "x",',
    });
    expectProblem(res, 400, 'malformed-json');
  });

  it('400 for a __proto__ key (prototype poisoning)', async () => {
    const res = await gw.app.inject({
      method: 'POST',
      url,
      headers: { ...auth(), 'content-type': 'application/json' },
      payload: '{"event_id":"p","first_name":"A","__proto__":{"x":1}}',
    });
    expectProblem(res, 400, 'malformed-json');
  });

  it('401 with a Bearer challenge for a missing key, a malformed header and an unknown key', async () => {
    const missing = await gw.app.inject({ method: 'POST', url, payload: { event_id: 'a', first_name: 'A' } });
    expectProblem(missing, 401, 'unauthorized');
    expect(missing.headers['www-authenticate']).toBe('Bearer realm="lead-gateway"');
    const malformed = await gw.app.inject({
      method: 'POST',
      url,
      headers: { authorization: 'Basic abc' },
      payload: { event_id: 'a', first_name: 'A' },
    });
    expect(malformed.headers['www-authenticate']).toContain('error="invalid_token"');
    const unknown = await gw.app.inject({
      method: 'POST',
      url,
      headers: { authorization: 'Bearer lgv1_unknown' },
      payload: { event_id: 'a', first_name: 'A' },
    });
    expectProblem(unknown, 401, 'unauthorized');
    expect(unknown.headers['www-authenticate']).toContain('error="invalid_token"');
  });

  it('401 comes before body validation, so a bad body tells an anonymous caller nothing', async () => {
    const res = await gw.app.inject({ method: 'POST', url, payload: { nonsense: true } });
    expectProblem(res, 401, 'unauthorized');
  });

  it('404 for an unknown path, 405 with Allow for a known path and another method', async () => {
    expectProblem(await gw.app.inject({ method: 'GET', url: '/api/integrations/v1/nothing/' }), 404, 'not-found');
    const res = await gw.app.inject({ method: 'GET', url, headers: auth() });
    expectProblem(res, 405, 'method-not-allowed');
    expect(res.headers.allow).toBe('POST');
  });

  it('413 for a body over 1 MiB, without storing anything', async () => {
    const before = await gw.inspect.submissions.count();
    const res = await gw.app.inject({
      method: 'POST',
      url,
      headers: auth(),
      payload: { event_id: 'big', first_name: 'A', notes: 'x'.repeat(1_048_576) },
    });
    expectProblem(res, 413, 'payload-too-large');
    expect(await gw.inspect.submissions.count()).toBe(before);
  });

  it('415 for a body that is not JSON, and for no body at all', async () => {
    const text = await gw.app.inject({
      method: 'POST',
      url,
      headers: { ...auth(), 'content-type': 'text/plain' },
      payload: 'event_id=x',
    });
    expectProblem(text, 415, 'unsupported-media-type');
    const none = await gw.app.inject({ method: 'POST', url, headers: auth() });
    expectProblem(none, 415, 'unsupported-media-type');
  });

  it('400 malformed-json for an empty body sent as JSON, and nothing stored', async () => {
    const before = await gw.inspect.submissions.count();
    const res = await gw.app.inject({
      method: 'POST',
      url,
      headers: { ...auth(), 'content-type': 'application/json' },
      payload: '',
    });
    expectProblem(res, 400, 'malformed-json');
    expect(await gw.inspect.submissions.count()).toBe(before);
  });

  it('422 for a JSON body that is not an object, the body itself named by the empty pointer (RFC 6901)', async () => {
    const res = await gw.app.inject({
      method: 'POST',
      url,
      headers: { ...auth(), 'content-type': 'application/json' },
      payload: '[1,2]',
    });
    const problem = expectProblem(res, 422, 'validation-failed');
    expect(problem.errors).toEqual([{ path: '', message: expect.any(String) }]);
    expect(problem.detail).toMatch(/^\(the body\): /);
  });

  it("names the body itself by the empty pointer in the body scan's refusals too", async () => {
    const nul = await gw.app.inject({
      method: 'POST',
      url,
      headers: { ...auth(), 'content-type': 'application/json' },
      payload: '"a\\u0000"',
    });
    expect(expectProblem(nul, 400, 'nul-character').errors).toEqual([
      { path: '', message: 'holds the character U+0000' },
    ]);
    const unpaired = await gw.app.inject({
      method: 'POST',
      url,
      headers: { ...auth(), 'content-type': 'application/json' },
      payload: '"\\ud800"',
    });
    expect(expectProblem(unpaired, 400, 'unpaired-surrogate').errors).toEqual([
      { path: '', message: 'holds an unpaired surrogate' },
    ]);
  });

  it('escapes `~` and `/` in the name of an unknown member (RFC 6901)', async () => {
    const res = await gw.app.inject({
      method: 'POST',
      url,
      headers: auth(),
      payload: { event_id: 'pointer-1', external_contact_id: 'p:1', first_name: 'A', 'a/b~c': 1 },
    });
    expect(expectProblem(res, 422, 'validation-failed').errors).toEqual([
      { path: '/a~1b~0c', message: 'is not a field of this request' },
    ]);
  });

  it('keeps a plain client X-Request-Id and replaces an unsafe one', async () => {
    const kept = await gw.app.inject({ method: 'GET', url: '/nowhere', headers: { 'x-request-id': 'client-123' } });
    expect(kept.headers['x-request-id']).toBe('client-123');
    expect(kept.json().request_id).toBe('client-123');
    const replaced = await gw.app.inject({
      method: 'GET',
      url: '/nowhere',
      headers: { 'x-request-id': 'bad id\u0000' },
    });
    expect(replaced.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('500 for a real fault', () => {
  it('masks the cause and gives the request id', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-fault-'));
    const store = await openTestStore(dir, 'g.db');
    const app = await buildApp({ adminToken: ADMIN_TOKEN }, { store, rules: createRulesHolder(EXAMPLE_RULES) });
    recordForContract(app);
    const issued = await app.inject({
      method: 'POST',
      url: '/admin/v1/integrations/brightpath:telegram-bot/keys',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    const secret = issued.json().key;
    await inspect(store).dropTables('lead_comments', 'lead_tags'); // the store now fails mid-unit
    const res = await app.inject({
      method: 'POST',
      url,
      headers: { authorization: `Bearer ${secret}` },
      payload: { event_id: 'f', first_name: 'A' },
    });
    const problem = expectProblem(res, 500, 'internal');
    expect(problem.detail).not.toMatch(/lead_tags|SQLITE|no such table/i);
    expect(problem.detail).toContain(problem.request_id);
    expect(await inspect(store).submissions.count()).toBe(0);
    await app.close();
  });
});
