// The drain chart in a real headless Chromium: a scripted legacy bot's calls (real HTTP) on the overview
// and in the integration page's chart, for the current hour; a screenshot of the page with its chart.
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startGateway, type Gateway } from '../helper.js';
import { addUser, PASSWORD } from '../support/console.js';
import { ARTEFACTS_DIR, chromiumOrSkip, launchChromium } from '../support/browser.js';

const chromiumPath = chromiumOrSkip();
const LEGACY_KEY = 'browser-chart-telegram-legacy-key';
/** The README shows this screenshot; `UPDATE_SCREENSHOTS=1` refreshes the copy kept there. */
const README_INTEGRATION_SCREENSHOT = join(import.meta.dirname, '..', '..', 'docs', 'images', 'console-integration.png');

let gw: Gateway;
let base: string;
let browser: Browser;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  if (chromiumPath === null) return;
  gw = await startGateway({ console: { secureCookies: false } });
  gw.secrets.add(LEGACY_KEY);
  base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
  await addUser(gw, 'dilnoza');
  expect((await gw.admin('POST', '/admin/v1/integrations/brightpath:telegram-bot/keys/import', { key: LEGACY_KEY })).statusCode).toBe(201);
  browser = await launchChromium(chromiumPath);
});
afterAll(async () => {
  if (chromiumPath === null) return;
  await browser.close();
  await gw.close();
});

async function newPage(): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
  contexts.push(context);
  return context.newPage();
}

describe.skipIf(chromiumPath === null)('the drain chart in Chromium', () => {
  it("shows a scripted legacy bot's calls on the overview and in the chart's current hour", async () => {
    const hour = new Date().toISOString().slice(0, 13);
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${base}/api/bots/api/boards/`, { headers: { 'x-bot-api-key': LEGACY_KEY } });
      expect(res.status).toBe(200);
    }
    const page = await newPage();
    await page.goto(`${base}/console`);
    await page.getByLabel('Name').fill('dilnoza');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(`${base}/console/integrations`);
    expect(await page.locator('tr[data-handle="brightpath:telegram-bot"] td[data-col="legacy_24h"]').innerText()).toBe('5');

    await page.getByRole('link', { name: 'Admissions Telegram bot' }).click();
    await page.waitForURL(`${base}/console/integrations/brightpath%3Atelegram-bot`);
    const chart = page.getByRole('img', { name: /Legacy and v1 calls, per hour/ });
    await expect.poll(() => chart.count()).toBe(1);
    expect(await page.locator(`svg.chart rect.mark-legacy[data-key="${hour}"] title`).textContent()).toMatch(/: 5 legacy call\(s\)$/);
    // Taken with the figures table folded, as a visitor first sees the page.
    const shot = join(ARTEFACTS_DIR, 'console-integration-chart.png');
    await page.screenshot({ path: shot, fullPage: true });
    if (process.env.UPDATE_SCREENSHOTS) copyFileSync(shot, README_INTEGRATION_SCREENSHOT);
    await page.getByText('The figures').click();
    expect(await page.locator(`tr[data-key="${hour}"] td[data-col="legacy"]`).innerText()).toBe('5');
    // The series are told apart by a dash pattern and marker shapes, not colour alone.
    expect(await page.locator('svg.chart polyline.series-legacy').getAttribute('stroke-dasharray')).toBe('6 4');

    await page.getByRole('link', { name: 'last 30 days, per day' }).click();
    await page.waitForURL(/range=30d/);
    expect(await page.locator(`svg.chart rect.mark-legacy[data-key="${hour.slice(0, 10)}"] title`).textContent()).toMatch(/: 5 legacy call\(s\)$/);
  });
});
