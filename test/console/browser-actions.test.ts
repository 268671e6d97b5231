// The migration steps in a real headless Chromium, against a scripted legacy bot over real HTTP: issue the
// v1 key and copy it with the button; a switch-off refused in the quiet period, then forced by typing the
// handle; the bot's next call is a 403 and the page shows it refused; roll back, and the bot works again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import type { Gateway } from '../helper.js';
import { ARTEFACTS_DIR, chromiumOrSkip } from '../support/browser.js';
import { BOT_HANDLE, startConsoleBrowser, type ConsoleBrowser } from '../support/console-browser.js';
import { join } from 'node:path';

const chromiumPath = chromiumOrSkip();
const LEGACY_KEY = 'browser-actions-telegram-legacy-key';

let cb: ConsoleBrowser;
let gw: Gateway;
let base: string;

beforeAll(async () => {
  if (chromiumPath === null) return;
  cb = await startConsoleBrowser(chromiumPath, { legacyKey: LEGACY_KEY, users: { dilnoza: null } });
  ({ gw, base } = cb);
});
afterAll(() => cb?.close());

const botCall = () => cb.botCall();
const integrationPage = () => `${base}/console/integrations/${encodeURIComponent(BOT_HANDLE)}`;

async function signedInPage(): Promise<Page> {
  // The clipboard permissions let the copy button write and the test read back what it wrote.
  const page = await cb.newPage({ permissions: ['clipboard-read', 'clipboard-write'] });
  await cb.signIn(page, 'dilnoza');
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
    const copied = await page.evaluate('navigator.clipboard.readText()');
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
    await page.getByLabel('Handle', { exact: true }).fill(BOT_HANDLE);
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
