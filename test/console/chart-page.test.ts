// The integration page's drain chart: a legacy bot's calls appear in the SVG and its figures table,
// per hour (24 hours, 7 days) and per day (30 days), chosen by a plain link (?range=); without one, the
// shortest range that covers the calls; the figures listed beside it, unfolded.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../helper.js';
import { addUser, consoleClient, type ConsoleClient } from '../support/console.js';

let gw: Gateway;
let team: ConsoleClient;
const LEGACY_KEY = 'chart-telegram-legacy-key';
const PAGE = '/console/integrations/brightpath:telegram-bot';

beforeAll(async () => {
  gw = await startGateway({ console: { secureCookies: false } });
  gw.secrets.add(LEGACY_KEY);
  await addUser(gw, 'dilnoza');
  team = consoleClient(gw.app, { gw });
  expect((await team.signIn('dilnoza')).statusCode).toBe(303);
  expect(
    (await gw.admin('POST', '/admin/v1/integrations/brightpath:telegram-bot/keys/import', { key: LEGACY_KEY }))
      .statusCode,
  ).toBe(201);
});
afterAll(() => gw.close());

/** The figures table's row for a bucket: its legacy and v1 cells. */
function figures(html: string, key: string): { legacy: number; v1: number } | null {
  const row = new RegExp(`<tr data-key="${key}">([\\s\\S]*?)</tr>`).exec(html)?.[1];
  if (row === undefined) return null;
  const cell = (col: string) => Number(new RegExp(`data-col="${col}">(\\d+)<`).exec(row)?.[1]);
  return { legacy: cell('legacy'), v1: cell('v1') };
}

describe('drain chart on the integration page', () => {
  it('shows an empty chart with its description before any call', async () => {
    const page = await team.get(PAGE);
    expect(page.statusCode).toBe(200);
    expect(page.body).toMatch(/<svg class="chart" role="img" aria-labelledby="chart-title chart-desc"/);
    expect(page.body).toContain('legacy calls stayed at 0/day');
    expect(page.body).not.toContain('class="mark-legacy" data-key');
    // No call at all: the 7-day view, its table saying so.
    expect(page.body).toContain('<strong aria-current="page">last 7 days, per hour</strong>');
    expect(page.body).toContain('No call in this range.');
  });

  it("counts a legacy bot's calls in the current hour and the current day", async () => {
    const at = new Date().toISOString();
    for (let i = 0; i < 4; i++) {
      const res = await gw.app.inject({
        method: 'GET',
        url: '/api/bots/api/boards/',
        headers: { 'x-bot-api-key': LEGACY_KEY },
      });
      expect(res.statusCode).toBe(200);
    }
    // Calls only in the last hour: the default is the 24-hour view, not one pixel of the 7-day one.
    const fresh = (await team.get(PAGE)).body;
    expect(fresh).toContain('<strong aria-current="page">last 24 hours, per hour</strong>');
    expect(fresh.match(/class="mark-legacy" data-key=/g)).toHaveLength(1);
    expect(figures(fresh, at.slice(0, 13))).toEqual({ legacy: 4, v1: 0 });
    expect(fresh).toContain('4 legacy call(s) and 0 v1 call(s) in all');
    // The figures table is not folded: only the hours with a call, counted in its caption.
    expect(fresh).not.toContain('<details>');
    expect(fresh).toContain('(1 of 24); the others had none.');

    const hourly = (await team.get(`${PAGE}?range=7d`)).body;
    expect(figures(hourly, at.slice(0, 13))).toEqual({ legacy: 4, v1: 0 });
    expect(hourly).toMatch(
      new RegExp(`class="mark-legacy" data-key="${at.slice(0, 13)}"[^>]*><title>[^<]*: 4 legacy call\\(s\\)</title>`),
    );
    expect(hourly).toContain('<strong aria-current="page">last 7 days, per hour</strong>');
    expect(hourly.match(/<tr data-key=/g)).toHaveLength(1);
    expect(hourly).toContain('(1 of 168)');

    const daily = (await team.get(`${PAGE}?range=30d`)).body;
    expect(figures(daily, at.slice(0, 10))).toEqual({ legacy: 4, v1: 0 });
    expect(daily.match(/<tr data-key=/g)).toHaveLength(1);
    expect(daily).toContain('(1 of 30)');
    expect(daily).toContain('<a href="?range=7d#chart-heading">last 7 days, per hour</a>');
    expect(daily).toContain('legacy calls rose from 0/day to 4/day');
  });

  it('takes an unknown range as none named, not as an error: the range that covers the calls', async () => {
    const page = await team.get(`${PAGE}?range=year`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<strong aria-current="page">last 24 hours, per hour</strong>');
  });
});

describe('unlinked legacy leads on the integration page', () => {
  it('lists them up to a bound, with a count of the rest', async () => {
    const { UNLINKED_LEADS_SHOWN } = await import('../../src/console/routes.js');
    const ids: string[] = [];
    // A legacy lead without extra_data.telegram_id has nothing to link a person by.
    for (let i = 0; i < UNLINKED_LEADS_SHOWN + 2; i++) {
      const res = await gw.app.inject({
        method: 'POST',
        url: '/api/bots/api/leads/',
        headers: { 'x-bot-api-key': LEGACY_KEY },
        payload: { first_name: `Anon${i}` },
      });
      expect(res.statusCode).toBe(201);
      ids.push(res.json().id as string);
    }
    const page = (await team.get(PAGE)).body;
    expect(page).toContain(
      `data-testid="unlinked-count">${UNLINKED_LEADS_SHOWN + 2} legacy lead(s) not linked to a person.`,
    );
    const listed = /<table data-testid="unlinked">([\s\S]*?)<\/table>/.exec(page)![1]!;
    const shown = [...listed.matchAll(/<th scope="row"><code>([0-9a-f-]+)<\/code>/g)].map((m) => m[1]);
    expect(shown).toHaveLength(UNLINKED_LEADS_SHOWN);
    expect(shown.every((id) => ids.includes(id!))).toBe(true);
    expect(page).toContain('data-testid="unlinked-rest">And 2 more');
    // The re-run linking form stays.
    expect(page).toContain(`action="/console/integrations/${encodeURIComponent('brightpath:telegram-bot')}/relink"`);
  });
});
