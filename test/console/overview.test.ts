// The integrations overview and an integration's page: the migration report's numbers per row, the
// fleet's progress, filters and sorting in the URL, a workspace owner held to their workspace, and
// console actions audited under the signed-in person's name.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../helper.js';
import { addUser, consoleClient, type ConsoleClient } from '../support/console.js';

let gw: Gateway;
let team: ConsoleClient;
let owner: ConsoleClient;
const LEGACY_KEY = 'overview-telegram-legacy-key';

beforeAll(async () => {
  gw = await startGateway({ console: { secureCookies: false } });
  gw.secrets.add(LEGACY_KEY);
  await addUser(gw, 'dilnoza');
  await addUser(gw, 'smile-owner', 'smile-dental');
  team = consoleClient(gw.app, { gw });
  owner = consoleClient(gw.app, { gw });
  expect((await team.signIn('dilnoza')).statusCode).toBe(303);
  expect((await owner.signIn('smile-owner')).statusCode).toBe(303);
  expect(
    (await gw.admin('POST', '/admin/v1/integrations/brightpath:telegram-bot/keys/import', { key: LEGACY_KEY }))
      .statusCode,
  ).toBe(201);
});
afterAll(() => gw.close());

/** The rows of the overview table: handle -> the text of its cells. */
function rowsOf(html: string): Map<string, Record<string, string>> {
  const rows = new Map<string, Record<string, string>>();
  for (const [, handle, cells] of html.matchAll(/<tr data-handle="([^"]+)">([\s\S]*?)<\/tr>/g)) {
    const numbers = Object.fromEntries(
      [...cells!.matchAll(/data-col="([a-z0-9_]+)">([^<]*)</g)].map(([, col, text]) => [col!, text!.trim()]),
    );
    const verdict = /class="verdict verdict-([a-z_]+)"/.exec(cells!)?.[1] ?? '';
    const state = /class="state state-([a-z_]+)"/.exec(cells!)?.[1] ?? '';
    rows.set(handle!, { ...numbers, verdict, state });
  }
  return rows;
}

describe('integrations overview', () => {
  it("counts a legacy bot's calls in its row and in the fleet's legacy share", async () => {
    for (let i = 0; i < 3; i++) {
      const res = await gw.app.inject({
        method: 'GET',
        url: '/api/bots/api/boards/',
        headers: { 'x-bot-api-key': LEGACY_KEY },
      });
      expect(res.statusCode).toBe(200);
    }
    const page = await team.get('/console/integrations');
    expect(page.statusCode).toBe(200);
    const row = rowsOf(page.body).get('brightpath:telegram-bot')!;
    expect(row).toMatchObject({ legacy_24h: '3', legacy_7d: '3', v1_7d: '0', state: 'legacy', verdict: 'not_ready' });
    expect(page.body).toContain('no v1 key has been issued yet');
    expect(page.body).toMatch(/data-testid="fleet-legacy-share">100\.0 %</);
    expect(page.body).toMatch(/data-testid="fleet-total">3</);
    // The bot with its legacy key imported is under way; the two with no key at all have not started.
    expect(page.body).toMatch(/data-testid="fleet-not-started">2</);
    expect(page.body).toMatch(/data-testid="fleet-legacy">1</);
    expect(page.body.match(/data-testid="not-started">not started</g)).toHaveLength(2);
    // The sunset date its rules set, and "not set" where they set none.
    expect(row).toMatchObject({ sunset: '2027-03-01' });
    expect(rowsOf(page.body).get('smile-dental:booking-form')).toMatchObject({ sunset: 'not set' });
  });

  it('filters and sorts by query parameters, without script', async () => {
    const filtered = rowsOf((await team.get('/console/integrations?workspace=smile-dental')).body);
    expect([...filtered.keys()]).toEqual(['smile-dental:booking-form']);
    const sorted = rowsOf((await team.get('/console/integrations?sort=legacy_7d&order=desc')).body);
    expect([...sorted.keys()][0]).toBe('brightpath:telegram-bot');
    const ascending = [...rowsOf((await team.get('/console/integrations?sort=integration&order=asc')).body).keys()];
    expect(ascending).toEqual([...ascending].sort());
    // The form's "All" options and an empty search box send empty values: no filter, every integration.
    const all = await team.get('/console/integrations?q=&workspace=&state=&verdict=&sort=integration&order=asc');
    expect([...rowsOf(all.body).keys()]).toHaveLength(3);
    expect(all.body).toContain('3 of 3 integrations');
    // A value the page does not know is ignored, not an error page.
    expect((await team.get('/console/integrations?state=bogus&sort=nope')).statusCode).toBe(200);
  });

  it('shows a workspace owner only their workspace: others are not listed, and a direct URL is a 404', async () => {
    const page = await owner.get('/console/integrations');
    expect([...rowsOf(page.body).keys()]).toEqual(['smile-dental:booking-form']);
    expect(page.body).toMatch(/data-testid="fleet-total">1</);
    expect(page.body).not.toContain('brightpath');
    const own = await owner.get('/console/integrations/smile-dental:booking-form');
    expect(own.statusCode).toBe(200);
    const other = await owner.get('/console/integrations/brightpath:telegram-bot');
    expect(other.statusCode).toBe(404);
    // Word for word what an integration that does not exist gets.
    expect(other.body).toContain('No integration &quot;brightpath:telegram-bot&quot;.');
    expect((await owner.get('/console/integrations/brightpath:nothing-here')).body).toContain(
      'No integration &quot;brightpath:nothing-here&quot;.',
    );
    const act = await owner.post('/console/integrations/brightpath:telegram-bot/relink', {}, '/console/integrations');
    expect(act.statusCode).toBe(404);
  });

  it("audits a console action under the signed-in person's name", async () => {
    const page = '/console/integrations/brightpath:telegram-bot';
    const res = await team.post(`${page}/relink`, {}, page);
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/console/integrations/brightpath%3Atelegram-bot');
    const audit = (await gw.admin('GET', '/admin/v1/integrations/brightpath:telegram-bot/audit')).json<{
      items: { action: string; actor: string }[];
    }>().items;
    expect(audit[0]).toMatchObject({ actor: 'dilnoza' });
    const shown = (await team.get(page)).body;
    expect(shown).toMatch(/data-col="actor">dilnoza</);
    // The action in words, and the page's sunset date from the rules.
    expect(shown).toContain('data-action="legacy_leads_linked">Legacy leads linked<');
    expect(shown).toContain('data-testid="sunset">2027-03-01<');
  });

  it('does not call an integration whose bot author holds a test key "not started"', async () => {
    const before = await team.get('/console/integrations');
    const notStarted = Number(/data-testid="fleet-not-started">(\d+)</.exec(before.body)?.[1]);
    const issued = await gw.admin('POST', '/admin/v1/integrations/smile-dental:booking-form/keys/test', {});
    expect(issued.statusCode).toBe(201);
    const after = await team.get('/console/integrations');
    expect(after.body).toMatch(new RegExp(`data-testid="fleet-not-started">${notStarted - 1}<`));
  });

  it('escapes what it shows: markup in a query comes back as text', async () => {
    const page = await team.get('/console/integrations?q=%3Cscript%3Ealert(1)%3C%2Fscript%3E');
    expect(page.body).toContain('value="&lt;script&gt;alert(1)&lt;/script&gt;"');
    expect(page.body).not.toContain('<script>alert(1)');
  });
});
