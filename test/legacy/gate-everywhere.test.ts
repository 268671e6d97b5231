// Every legacy path and method passes the gate: the prefix itself and unknown paths under it too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../helper.js';

let gw: Gateway;
const KEY = 'gate-everywhere-legacy-key-0001';
const handle = 'brightpath:telegram-bot';

beforeAll(async () => {
  gw = await startGateway();
  expect((await gw.admin('POST', `/admin/v1/integrations/${handle}/keys/import`, { key: KEY })).statusCode).toBe(201);
});
afterAll(() => gw.close());

const PATHS = ['/api/bots/api', '/api/bots/api/', '/api/bots/api/nothing/here/', '/api/bots/api/leads/x/y/z'];
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

describe('the legacy gate on every path', () => {
  it('401 without a key and 404 with one, never 405, with the deprecation headers', async () => {
    for (const url of PATHS) {
      for (const method of METHODS) {
        const anonymous = await gw.app.inject({ method, url });
        expect(anonymous.statusCode, `${method} ${url}`).toBe(401);
        expect(anonymous.headers.deprecation).toMatch(/^@\d+$/);
        expect(anonymous.headers.allow).toBeUndefined();
        const keyed = await gw.app.inject({ method, url, headers: { 'x-bot-api-key': KEY } });
        expect(keyed.statusCode, `${method} ${url}`).toBe(404);
        expect(keyed.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(keyed.headers.link).toMatch(/rel="deprecation"/);
      }
    }
  });

  it('403 everywhere after switch-off, naming the replacement', async () => {
    await gw.issueKey(handle);
    expect(
      (await gw.admin('POST', `/admin/v1/integrations/${handle}/switch-off`, { reason: 'moved', force: true }))
        .statusCode,
    ).toBe(200);
    for (const url of PATHS) {
      for (const method of METHODS) {
        const res = await gw.app.inject({ method, url, headers: { 'x-bot-api-key': KEY } });
        expect(res.statusCode, `${method} ${url}`).toBe(403);
        expect(res.json()).toMatchObject({ code: 'forbidden', migration_guide: '/docs/migration' });
      }
    }
  });
});
