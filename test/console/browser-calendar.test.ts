// The migration calendar in a real headless Chromium, as the service team lives it: a brownout window
// set on the integration page starts a few seconds later and refuses the bot, the page counts the
// refused calls; a switch-off scheduled while the bot still calls is refused with its reason, and one
// scheduled with force is carried out by the schedule runner: the state, the audit trail and the bot
// all say so.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import type { Gateway } from '../helper.js';
import { chromiumOrSkip } from '../support/browser.js';
import { BOT_HANDLE, startConsoleBrowser, type ConsoleBrowser } from '../support/console-browser.js';

const chromiumPath = chromiumOrSkip();
const LEGACY_KEY = 'browser-calendar-telegram-legacy-key';

let cb: ConsoleBrowser;
let gw: Gateway;
let base: string;

beforeAll(async () => {
  if (chromiumPath === null) return;
  cb = await startConsoleBrowser(chromiumPath, { legacyKey: LEGACY_KEY, users: { dilnoza: null } });
  ({ gw, base } = cb);
});
afterAll(() => cb?.close());

/** A datetime-local value (UTC, whole seconds) `ms` from now. */
const inUtc = (ms: number) => new Date(Date.now() + ms).toISOString().slice(0, 19);

/** The page's text of `testId` once reloaded, polled until it matches. */
const reloadUntil = (page: Page, testId: string, pattern: RegExp) =>
  expect
    .poll(
      async () => {
        await page.reload();
        return page.getByTestId(testId).innerText();
      },
      { timeout: 20_000, interval: 500 },
    )
    .toMatch(pattern);

describe.skipIf(chromiumPath === null)('the migration calendar in Chromium', () => {
  it(
    'a brownout starts and counts the refused calls; a switch-off scheduled is refused, then carried out forced',
    { timeout: 90_000 },
    async () => {
      // The bot has its v1 key (a schedule needs one) and still calls the old interface.
      await gw.issueKey(BOT_HANDLE);
      expect(await cb.botCall()).toBe(200);
      const integrationPage = `${base}/console/integrations/${encodeURIComponent(BOT_HANDLE)}`;

      const team = await cb.newPage();
      await cb.signIn(team, 'dilnoza');
      await team.waitForURL(`${base}/console/integrations`);
      await team.goto(integrationPage);

      // A one-minute brownout, starting a few seconds from now.
      const brownout = team.getByTestId('brownout-form');
      await brownout.getByLabel('Start').fill(inUtc(4_000));
      await brownout.getByLabel('Zone').fill('Z');
      await brownout.getByLabel('Minutes').fill('1');
      await brownout.getByRole('button', { name: 'Add the brownout window' }).click();
      await team.waitForURL(integrationPage);
      expect(await team.getByTestId('brownouts').innerText()).toMatch(
        /^A brownout is scheduled at \d{4}-\d\d-\d\d \d\d:\d\d UTC\.$/,
      );
      expect(await team.locator('[data-testid="brownout-windows"] tbody tr').getAttribute('data-source')).toBe(
        'stored',
      );

      // It starts: the bot is refused, three times.
      await expect.poll(() => cb.botCall(), { timeout: 15_000, interval: 250 }).toBe(403);
      expect(await cb.botCall()).toBe(403);
      expect(await cb.botCall()).toBe(403);
      await reloadUntil(
        team,
        'brownouts',
        /^A brownout is running since .* UTC: 3 calls from this bot refused so far\. GET \/api\/bots\/api\/boards\/: 3$/,
      );

      // Scheduled while the bot still calls: refused, with the reason on the page.
      const schedule = team.getByTestId('schedule-form');
      await schedule.getByLabel('At (UTC)').fill(inUtc(3_000));
      await schedule.getByRole('button', { name: 'Schedule the switch-off' }).click();
      await team.waitForURL(integrationPage);
      expect(await team.getByTestId('schedule').innerText()).toMatch(
        /^The switch-off is scheduled at .*, by dilnoza\.$/,
      );
      await reloadUntil(
        team,
        'schedule',
        /^The scheduled switch-off was refused at .* UTC: the deprecated interface was called at .*, within the 24 h quiet period;.* Next attempt at /,
      );
      expect(await team.getByTestId('state').innerText()).toBe('migrating');

      // Scheduled again with force: carried out by the schedule runner.
      await schedule.getByLabel('At (UTC)').fill(inUtc(3_000));
      await schedule.getByRole('checkbox', { name: /Force/ }).check();
      await schedule.getByRole('button', { name: 'Schedule the switch-off' }).click();
      await team.waitForURL(integrationPage);
      await reloadUntil(
        team,
        'schedule',
        /^The scheduled switch-off was carried out at .* \(scheduled by dilnoza\)\.$/,
      );
      expect(await team.getByTestId('state').innerText()).toBe('switched_off');
      const actions = await team.locator('[data-testid="audit"] td[data-col="actor"]').allInnerTexts();
      expect(actions[0]).toBe('schedule');
      // The bot is refused by the switch-off now, not by the brownout (cancelled with it).
      const res = await fetch(`${base}/api/bots/api/boards/`, { headers: { 'x-bot-api-key': LEGACY_KEY } });
      expect(res.status).toBe(403);
      expect(((await res.json()) as { type: string }).type).not.toMatch(/brownout/);
    },
  );
});
