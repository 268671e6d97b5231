// The console in a real headless Chromium: sign in, a legacy bot's calls on the overview, a workspace
// owner held to their workspace, a form without its CSRF token refused, sign-out that ends the session.
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ARTEFACTS_DIR, chromiumOrSkip } from '../support/browser.js';
import { startConsoleBrowser, type ConsoleBrowser } from '../support/console-browser.js';

const chromiumPath = chromiumOrSkip();
const LEGACY_KEY = 'browser-telegram-legacy-key';
/** The README shows this screenshot; `UPDATE_SCREENSHOTS=1` refreshes the copy kept there. */
const README_SCREENSHOT = join(import.meta.dirname, '..', '..', 'docs', 'images', 'console-overview.png');

let cb: ConsoleBrowser;
let base: string;

beforeAll(async () => {
  if (chromiumPath === null) return;
  // Plain http on 127.0.0.1: the development setting, cookies without Secure (test/console/sign-in.test.ts covers HTTPS).
  cb = await startConsoleBrowser(chromiumPath, {
    legacyKey: LEGACY_KEY,
    users: { dilnoza: null, 'smile-owner': 'smile-dental' },
  });
  ({ base } = cb);
});
afterAll(() => cb?.close());

const newPage = (): Promise<Page> => cb.newPage();
const signIn = (page: Page, name: string, password?: string): Promise<void> => cb.signIn(page, name, password);

const cell = (page: Page, handle: string, column: string) =>
  page.locator(`tr[data-handle="${handle}"] td[data-col="${column}"]`).innerText();

describe.skipIf(chromiumPath === null)('the console in Chromium', () => {
  it('refuses a wrong password and lands on the overview with the right one', async () => {
    const page = await newPage();
    await signIn(page, 'dilnoza', 'not the password at all');
    await expect.poll(() => page.getByRole('alert').innerText()).toContain('Wrong name or password');
    expect(page.url()).toBe(`${base}/console/sign-in`);
    await signIn(page, 'dilnoza');
    await page.waitForURL(`${base}/console/integrations`);
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Integrations');
    expect(await page.getByTestId('viewer').innerText()).toBe('dilnoza');
    const session = (await page.context().cookies()).find((c) => c.name === 'lg_console')!;
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/console', expires: -1 });
  });

  it("shows a scripted legacy bot's calls on the overview", async () => {
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${base}/api/bots/api/boards/`, { headers: { 'x-bot-api-key': LEGACY_KEY } });
      expect(res.status).toBe(200);
    }
    const page = await newPage();
    await signIn(page, 'dilnoza');
    await page.waitForURL(`${base}/console/integrations`);
    expect(await cell(page, 'brightpath:telegram-bot', 'legacy_24h')).toBe('4');
    expect(await cell(page, 'brightpath:telegram-bot', 'legacy_7d')).toBe('4');
    expect(await page.getByTestId('fleet-legacy-share').innerText()).toBe('100.0 %');
    // Sorting is a link: the busiest legacy caller first.
    await page.getByRole('link', { name: 'Legacy calls 7 d' }).click();
    await page.getByRole('link', { name: 'Legacy calls 7 d' }).click();
    await page.waitForURL(/sort=legacy_7d&order=desc/);
    expect(await page.locator('tbody tr').first().getAttribute('data-handle')).toBe('brightpath:telegram-bot');
    const shot = join(ARTEFACTS_DIR, 'console-overview.png');
    await page.screenshot({ path: shot, fullPage: true });
    if (process.env.UPDATE_SCREENSHOTS) copyFileSync(shot, README_SCREENSHOT);
  });

  it("runs an integration page's action under the signed-in name, shown in its audit trail", async () => {
    const page = await newPage();
    await signIn(page, 'dilnoza');
    await page.waitForURL(`${base}/console/integrations`);
    await page.getByRole('link', { name: 'Admissions Telegram bot' }).click();
    await page.waitForURL(`${base}/console/integrations/brightpath%3Atelegram-bot`);
    expect(await page.getByTestId('state').innerText()).toBe('legacy');
    await page.getByRole('button', { name: 'Re-run linking' }).click();
    await expect
      .poll(() => page.getByTestId('audit').locator('td[data-col="actor"]').first().innerText())
      .toBe('dilnoza');
    const shot = join(ARTEFACTS_DIR, 'console-integration.png');
    // The README's copy of the integration page is refreshed by browser-chart.test.ts, with its chart drawn.
    await page.screenshot({ path: shot, fullPage: true });
  });

  it('keeps a workspace owner to their workspace: others are not listed, and their URL is a 404', async () => {
    const page = await newPage();
    await signIn(page, 'smile-owner');
    await page.waitForURL(`${base}/console/integrations`);
    expect(
      await page.locator('tbody tr[data-handle]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-handle'))),
    ).toEqual(['smile-dental:booking-form']);
    const other = await page.goto(`${base}/console/integrations/brightpath:telegram-bot`);
    expect(other!.status()).toBe(404);
    expect(await page.getByRole('alert').innerText()).toBe('No integration "brightpath:telegram-bot".');
  });

  it('refuses a form posted without its CSRF token with 403, and keeps the session', async () => {
    const page = await newPage();
    await signIn(page, 'dilnoza');
    await page.waitForURL(`${base}/console/integrations`);
    // What a forged form on another site would lack: the token. DevTools removes it (no script runs in the page).
    await page.locator('form.sign-out input[name="_csrf"]').evaluate((input) => input.remove());
    const [answer] = await Promise.all([
      page.waitForResponse(`${base}/console/sign-out`),
      page.getByRole('button', { name: 'Sign out' }).click(),
    ]);
    expect(answer.status()).toBe(403);
    expect(await page.getByRole('alert').innerText()).toContain('without its security token');
    expect((await page.goto(`${base}/console/integrations`))!.status()).toBe(200);
  });

  it('ends the session at sign-out: the old cookie no longer opens the overview', async () => {
    const page = await newPage();
    await signIn(page, 'dilnoza');
    await page.waitForURL(`${base}/console/integrations`);
    const kept = await page.context().cookies();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${base}/console/sign-in`);
    const replay = await newPage();
    await replay.context().addCookies(kept);
    await replay.goto(`${base}/console/integrations`);
    expect(replay.url()).toBe(`${base}/console/sign-in`);
  });
});
