// The migration steps in a real headless Chromium, against a scripted legacy bot over real HTTP: issue the
// v1 key and copy it with the button; a switch-off refused in the quiet period, then forced by typing the
// handle; the bot's next call is a 403 and the page shows it refused; roll back, and the bot works again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startGateway, type Gateway } from '../helper.js';
import { addUser, PASSWORD } from '../support/console.js';
import { ARTEFACTS_DIR, chromiumOrSkip, launchChromium } from '../support/browser.js';
import { join } from 'node:path';

const chromiumPath = chromiumOrSkip();
const LEGACY_KEY = 'browser-actions-telegram-legacy-key';
const HANDLE = 'brightpath:telegram-bot';

let gw: Gateway;
let base: string;
let browser: Browser;

beforeAll(async () => {
  if (chromiumPath === null) return;
  gw = await startGateway({ console: { secureCookies: false } });
  gw.secrets.add(LEGACY_KEY);
  base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
  await addUser(gw, 'dilnoza');
  expect((await gw.admin('POST', `/admin/v1/integrations/${HANDLE}/keys/import`, { key: LEGACY_KEY })).statusCode).toBe(201);
  browser = await launchChromium(chromiumPath);
});
afterAll(async () => {
  if (chromiumPath === null) return;
  await browser.close();
  await gw.close();
});

/** The legacy bot: unchanged, calling the old interface over real HTTP. */
const botCall = async () => (await fetch(`${base}/api/bots/api/boards/`, { headers: { 'x-bot-api-key': LEGACY_KEY } })).status;
const integrationPage = () => `${base}/console/integrations/${encodeURIComponent(HANDLE)}`;

async function signedInPage(): Promise<Page> {
  // The clipboard permissions let the copy button write and the test read back what it wrote.
  const context = await browser.newContext({ viewport: { width: 1360, height: 900 }, permissions: ['clipboard-read', 'clipboard-write'] });
  const page = await context.newPage();
  await page.goto(`${base}/console`);
  await page.getByLabel('Name').fill('dilnoza');
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL(`${base}/console/integrations`);
  return page;
}

describe.skipIf(chromiumPath === null)('the migration steps in Chromium', () => {
  it('issues and copies the v1 key, is refused then forced to switch off, shows the 403, and rolls back', async () => {
    expect(await botCall()).toBe(200);
    const page = await signedInPage();
    await page.goto(integrationPage());

    // Issue the v1 key: shown once, copied by the button into the clipboard.
    await page.getByRole('button', { name: 'Issue the v1 key' }).click();
    const shown = await page.getByLabel('v1 key', { exact: true }).inputValue();
    gw.secrets.add(shown);
    await page.getByRole('button', { name: 'Copy', exact: true }).click();
    await expect.poll(() => page.getByRole('status').innerText()).toBe('Copied');
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    expect(copied).toBe(shown);
    // The copied key is a working v1 key.
    const v1 = await fetch(`${base}/api/integrations/v1/leads`, {
      method: 'POST',
      headers: { authorization: `Bearer ${copied}`, 'content-type': 'application/json' },
      body: JSON.stringify({ event_id: 'browser-copied-key-1', first_name: 'Ali' }),
    });
    expect(v1.status).toBe(201);
    await page.goto(integrationPage());
    expect(await page.content()).not.toContain(shown);
    await expect.poll(() => page.getByTestId('state').innerText()).toBe('migrating');

    // Switch off: refused, the bot called within the quiet period; the reason and the last call shown.
    await page.getByRole('button', { name: 'Switch the old interface off' }).click();
    const alert = page.getByRole('alert');
    await expect.poll(() => alert.innerText()).toContain('within the 24 h quiet period');
    expect(await alert.innerText()).toContain('GET /api/bots/api/boards/');
    expect(await page.getByTestId('last-legacy-call').innerText()).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d UTC$/);
    expect(await page.getByTestId('state').innerText()).toBe('migrating');

    // Forced by typing the handle.
    await page.getByLabel('Handle', { exact: true }).fill(HANDLE);
    await page.getByRole('button', { name: 'Force the switch-off' }).click();
    await expect.poll(() => page.getByTestId('state').innerText()).toBe('switched_off');
    await page.screenshot({ path: join(ARTEFACTS_DIR, 'console-switched-off.png'), fullPage: true });

    // The bot's next call is refused, and the page shows it refused on its route.
    expect(await botCall()).toBe(403);
    await page.reload();
    const route = page.locator('tr[data-route="GET /api/bots/api/boards/"] td[data-col="refused"]');
    await expect.poll(() => route.innerText()).toBe('1');
    expect(await page.getByText('legacy calls are answered 403').count()).toBe(1);

    // Roll back: the old key works again.
    await page.getByLabel('Reason (required)').fill('the bot still needs the old interface');
    await page.getByRole('button', { name: 'Roll back: the old key works again' }).click();
    await expect.poll(() => page.getByTestId('state').innerText()).toBe('migrating');
    expect(await botCall()).toBe(200);
    const actors = await page.locator('[data-testid="audit"] td[data-col="actor"]').allInnerTexts();
    expect(actors.slice(0, 3)).toEqual(['dilnoza', 'dilnoza', 'dilnoza']);
  });
});
