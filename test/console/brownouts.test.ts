// Brownout windows in the console: the service team adds one from the integration's page (a start, its
// zone, its minutes), sees it listed beside the rules' own with who set it, and cancels it; bad input is
// refused on the page and stores nothing; a workspace owner sees the windows and cannot act.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../helper.js';
import { addUser, consoleClient, type ConsoleClient } from '../support/console.js';
import { at, removeBrownoutRules, rulesWith, window } from '../support/brownout-rules.js';
import type { BrownoutPage } from '../../src/migration/brownout-windows.js';

const HANDLE = 'brightpath:telegram-bot';
const PAGE = `/console/integrations/${HANDLE}`;
const DAY = 86_400_000;
const RULES_START = Math.ceil((Date.now() + 2 * DAY) / 3_600_000) * 3_600_000;

let gw: Gateway;
let team: ConsoleClient;
let owner: ConsoleClient;
beforeAll(async () => {
  gw = await startGateway({
    rulesDir: rulesWith({ telegram: `[${window(RULES_START, 30)}]` }),
    console: { secureCookies: false },
  });
  await addUser(gw, 'team-brownout');
  await addUser(gw, 'owner-brownout', 'brightpath');
  team = consoleClient(gw.app, { gw });
  owner = consoleClient(gw.app, { gw });
  expect((await team.signIn('team-brownout')).statusCode).toBe(303);
  expect((await owner.signIn('owner-brownout')).statusCode).toBe(303);
});
afterAll(async () => {
  await gw.close();
  removeBrownoutRules();
});

const stored = async () =>
  (await gw.admin('GET', `/admin/v1/integrations/${HANDLE}/brownouts`))
    .json<BrownoutPage>()
    .items.filter((e) => e.source === 'stored');
/** The windows table's rows: each row's source, its cells' text and whether it has a cancel button. */
const rows = (html: string) =>
  [...html.matchAll(/<tr data-id="([^"]+)" data-source="([^"]+)">([\s\S]*?)<\/tr>/g)].map((m) => ({
    id: m[1]!,
    source: m[2]!,
    cells: [...m[3]!.matchAll(/<t[hd][^>]*>([^<]*)</g)].map((c) => c[1]!),
    cancel: m[3]!.includes('/brownouts/cancel"'),
  }));

describe('brownout windows in the console', () => {
  it('are added from the page in a zone, listed with the rules windows and who set them, and cancelled', async () => {
    const startMs = RULES_START + DAY;
    // 10:00 at +05:00 is 05:00 UTC.
    const local = new Date(startMs + 5 * 3_600_000).toISOString().slice(0, 16);
    const res = await team.post(`${PAGE}/brownouts`, { start: local, zone: '+05:00', minutes: '20' }, PAGE);
    expect(res.statusCode).toBe(303);
    const [added] = await stored();
    expect(added).toMatchObject({ start: at(startMs), minutes: 20, created_by: 'team-brownout' });

    const page = (await team.get(PAGE)).body;
    const shown = (ms: number) => `${at(ms).slice(0, 16).replace('T', ' ')} UTC`;
    expect(rows(page)).toEqual([
      {
        id: `rules:${at(RULES_START)}`,
        source: 'rules',
        cells: [shown(RULES_START), shown(RULES_START + 30 * 60_000), '30', 'scheduled', 'the rules', 'edit the rules'],
        cancel: false,
      },
      {
        id: added!.id,
        source: 'stored',
        cells: [shown(startMs), shown(startMs + 20 * 60_000), '20', 'scheduled', 'team-brownout', ''],
        cancel: true,
      },
    ]);

    // The owner sees them, has no form, and may not act.
    const ownerPage = (await owner.get(PAGE)).body;
    expect(rows(ownerPage).map((r) => [r.id, r.cancel])).toEqual([
      [`rules:${at(RULES_START)}`, false],
      [added!.id, false],
    ]);
    expect(ownerPage).not.toContain('data-testid="brownout-form"');
    expect((await owner.post(`${PAGE}/brownouts/cancel`, { id: added!.id }, PAGE)).statusCode).toBe(403);
    expect((await owner.post(`${PAGE}/brownouts`, { start: local, minutes: '5' }, PAGE)).statusCode).toBe(403);

    expect((await team.post(`${PAGE}/brownouts/cancel`, { id: added!.id }, PAGE)).statusCode).toBe(303);
    expect(await stored()).toEqual([]);
    expect(rows((await team.get(PAGE)).body).map((r) => r.source)).toEqual(['rules']);
  });

  it("shows a stored window in the overview's next moment", async () => {
    const website = 'brightpath:website-form';
    const startMs = RULES_START + 4 * DAY;
    const added = await gw.admin('POST', `/admin/v1/integrations/${website}/brownouts`, {
      start: at(startMs),
      minutes: 5,
    });
    expect(added.statusCode).toBe(201);
    const overview = (await team.get('/console/integrations')).body;
    const row = overview.slice(overview.indexOf(`data-handle="${website}"`));
    expect(/data-col="next-moment">([^<]*)</.exec(row)?.[1]).toBe(
      `brownout at ${at(startMs).slice(0, 16).replace('T', ' ')} UTC`,
    );
  });

  it('refuses bad input on the page, with what to fix, and stores nothing', async () => {
    const refusal = (html: string) =>
      /data-testid="refusal"><p><strong>([^<]*)<\/strong> ([^<]*)</.exec(html)?.slice(1);
    const future = new Date(RULES_START + 3 * DAY).toISOString().slice(0, 16);
    const past = await team.post(`${PAGE}/brownouts`, { start: '2020-01-01T10:00', minutes: '5' }, PAGE);
    expect(past.statusCode).toBe(422);
    expect(refusal(past.body)?.[1]).toMatch(/start: is in the past/);
    const badZone = await team.post(`${PAGE}/brownouts`, { start: future, zone: 'Tashkent', minutes: '5' }, PAGE);
    expect(badZone.statusCode).toBe(422);
    expect(refusal(badZone.body)?.[1]).toMatch(/start: must be a date and time with its zone/);
    const long = await team.post(`${PAGE}/brownouts`, { start: future, minutes: '241' }, PAGE);
    expect(long.statusCode).toBe(422);
    expect(refusal(long.body)?.[1]).toMatch(/minutes/);
    const overlap = await team.post(
      `${PAGE}/brownouts`,
      { start: at(RULES_START + 10 * 60_000).slice(0, 16), minutes: '5' },
      PAGE,
    );
    expect(overlap.statusCode).toBe(409);
    expect(refusal(overlap.body)).toEqual([
      'Refused (409):',
      expect.stringMatching(/overlaps the window from .*\(set in the rules\)/),
    ]);
    // The rules' window cannot be cancelled from the page either.
    const rulesCancel = await team.post(`${PAGE}/brownouts/cancel`, { id: `rules:${at(RULES_START)}` }, PAGE);
    expect(rulesCancel.statusCode).toBe(409);
    expect(refusal(rulesCancel.body)?.[1]).toMatch(/set in the rules/);
    expect(await stored()).toEqual([]);
  });
});
