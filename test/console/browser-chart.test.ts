// The drain chart in a real headless Chromium: a scripted legacy bot's calls (real HTTP) on the overview
// and in the integration page's chart, for the current hour; a screenshot of the page with its chart.
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARTEFACTS_DIR, chromiumOrSkip } from '../support/browser.js';
import { startConsoleBrowser, type ConsoleBrowser } from '../support/console-browser.js';

const chromiumPath = chromiumOrSkip();
const LEGACY_KEY = 'browser-chart-telegram-legacy-key';
/** The README shows this screenshot; `UPDATE_SCREENSHOTS=1` refreshes the copy kept there. */
const README_INTEGRATION_SCREENSHOT = join(
  import.meta.dirname,
  '..',
  '..',
  'docs',
  'images',
  'console-integration.png',
);

let cb: ConsoleBrowser;
let base: string;

beforeAll(async () => {
  if (chromiumPath === null) return;
  cb = await startConsoleBrowser(chromiumPath, { legacyKey: LEGACY_KEY, users: { dilnoza: null } });
  ({ base } = cb);
});
afterAll(() => cb?.close());

describe.skipIf(chromiumPath === null)('the drain chart in Chromium', () => {
  it("shows a scripted legacy bot's calls on the overview and in the chart's current hour", async () => {
    const hour = new Date().toISOString().slice(0, 13);
    for (let i = 0; i < 5; i++) {
      expect(await cb.botCall()).toBe(200);
    }
    const page = await cb.newPage();
    await cb.signIn(page, 'dilnoza');
    await page.waitForURL(`${base}/console/integrations`);
    expect(await page.locator('tr[data-handle="brightpath:telegram-bot"] td[data-col="legacy_24h"]').innerText()).toBe(
      '5',
    );

    await page.getByRole('link', { name: 'Admissions Telegram bot' }).click();
    await page.waitForURL(`${base}/console/integrations/brightpath%3Atelegram-bot`);
    const chart = page.getByRole('img', { name: /Legacy and v1 calls, per hour, last 24 hours/ });
    await expect.poll(() => chart.count()).toBe(1);
    expect(await page.locator(`svg.chart rect.mark-legacy[data-key="${hour}"] title`).textContent()).toMatch(
      /: 5 legacy call\(s\)$/,
    );
    // A fresh drain fills the 24-hour view the page picks for it.
    expect(await page.locator('.chart-range [aria-current="page"]').innerText()).toBe('last 24 hours, per hour');
    const shot = join(ARTEFACTS_DIR, 'console-integration-chart.png');
    await page.screenshot({ path: shot, fullPage: true });
    if (process.env.UPDATE_SCREENSHOTS) copyFileSync(shot, README_INTEGRATION_SCREENSHOT);
    // The figures are readable as they are, no toggle opened.
    expect(await page.locator(`tr[data-key="${hour}"] td[data-col="legacy"]`).isVisible()).toBe(true);
    expect(await page.locator(`tr[data-key="${hour}"] td[data-col="legacy"]`).innerText()).toBe('5');
    // The series are told apart by a dash pattern and marker shapes, not colour alone.
    expect(await page.locator('svg.chart polyline.series-legacy').getAttribute('stroke-dasharray')).toBe('6 4');

    await page.getByRole('link', { name: 'last 30 days, per day' }).click();
    await page.waitForURL(/range=30d/);
    expect(
      await page.locator(`svg.chart rect.mark-legacy[data-key="${hour.slice(0, 10)}"] title`).textContent(),
    ).toMatch(/: 5 legacy call\(s\)$/);
  });
});
