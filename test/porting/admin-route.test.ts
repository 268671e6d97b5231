// GET /admin/v1/integrations/{ref}/porting-guide: JSON by default, Markdown when asked by format= or
// Accept, a problem for an unknown integration or a missing token.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startGateway, type Gateway } from '../helper.js';

let gw: Gateway;
const URL = '/admin/v1/integrations/brightpath:website-form/porting-guide';
beforeAll(async () => void (gw = await startGateway()));
afterAll(() => gw.close());

const get = (url: string, headers: Record<string, string> = {}) =>
  gw.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...headers } });

describe('the porting guide route', () => {
  it('answers JSON by default: an integration never called has no routes and no fix-by date', async () => {
    const res = await get(URL);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toMatchObject({
      integration: { handle: 'brightpath:website-form' },
      state: 'legacy',
      fix_by: null,
      window_days: 30,
      routes: [],
      not_needed: [],
      not_available: [],
    });
  });

  it('answers Markdown for format=markdown, or for Accept: text/markdown unless format=json says otherwise', async () => {
    for (const res of [
      await get(`${URL}?format=markdown`),
      await get(URL, { accept: 'text/markdown' }),
      await get(`${URL}?format=markdown`, { accept: 'application/json' }),
    ]) {
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('text/markdown; charset=utf-8');
      expect(res.body).toContain('# Porting guide: Website enrolment form (brightpath:website-form)');
      expect(res.body).toContain('No legacy call in the last 30 days.');
    }
    expect((await get(`${URL}?format=json`, { accept: 'text/markdown' })).headers['content-type']).toMatch(
      /^application\/json/,
    );
    expect((await get(URL, { accept: 'application/json, text/markdown' })).headers['content-type']).toMatch(
      /^application\/json/,
    );
  });

  it('refuses an unknown integration, an unknown format and a missing token', async () => {
    expect((await get('/admin/v1/integrations/nobody:none/porting-guide')).json()).toMatchObject({
      status: 404,
      detail: expect.stringContaining('No integration "nobody:none"'),
    });
    expect((await get(`${URL}?format=html`)).statusCode).toBe(422);
    expect((await gw.app.inject({ method: 'GET', url: URL })).statusCode).toBe(401);
  });
});
