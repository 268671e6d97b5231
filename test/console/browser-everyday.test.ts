// The console's everyday use in a real headless Chromium: the overview's filter form used by clicking,
// a v1 key issued then the page reloaded (no key shown, none issued), the confirmations of a second key,
// a revoke and a renewal, the force form beside a refused switch-off with the reason kept, the sunset
// date and "not started", one time format, the audit in words, and a favicon with no console error.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import type { Gateway } from '../helper.js';
import { chromiumOrSkip } from '../support/browser.js';
import { BOT_HANDLE, startConsoleBrowser, type ConsoleBrowser } from '../support/console-browser.js';

const chromiumPath = chromiumOrSkip();
const LEGACY_KEY = 'browser-everyday-telegram-legacy-key';
/** A raw ISO date-time, as the page must never print one. */
const RAW_ISO = /\d{4}-\d\d-\d\dT\d\d:\d\d/;

let cb: ConsoleBrowser;
let gw: Gateway;
let base: string;

beforeAll(async () => {
  if (chromiumPath === null) return;
  cb = await startConsoleBrowser(chromiumPath, { legacyKey: LEGACY_KEY, users: { dilnoza: null } });
  ({ gw, base } = cb);
});
afterAll(() => cb?.close());

const integrationPage = () => `${base}/console/integrations/${encodeURIComponent(BOT_HANDLE)}`;
const liveKeys = async (kind: string) =>
  (await gw.admin('GET', `/admin/v1/integrations/${BOT_HANDLE}/keys`))
    .json<{ items: { kind: string; revoked_at: string | null }[] }>()
    .items.filter((k) => k.kind === kind && k.revoked_at === null).length;

/** A signed-in page that records every console error and failed request the browser reports. */
async function signedInPage(): Promise<{ page: Page; errors: string[] }> {
  const page = await cb.newPage();
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('response', (response) => {
    if (response.status() >= 400) errors.push(`${response.status()} ${response.url()}`);
  });
  await cb.signIn(page, 'dilnoza');
  await page.waitForURL(`${base}/console/integrations`);
  return { page, errors };
}

describe.skipIf(chromiumPath === null)('the console every day, in Chromium', () => {
  it('filters by clicking: the form with "All" shows every integration; the tiles say "not started"; the sunset shows', async () => {
    const { page, errors } = await signedInPage();
    await page.getByLabel('Name or handle').fill('');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/workspace=/);
    expect(await page.locator('table[data-testid="integrations"] caption').innerText()).toMatch(/^3 of 3 integrations/);
    await page.getByLabel('Workspace').selectOption({ label: 'Smile Dental Clinic' });
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/workspace=smile-dental/);
    expect(await page.locator('tbody tr[data-handle]').count()).toBe(1);

    await page.goto(`${base}/console/integrations`);
    expect(await page.getByTestId('fleet-not-started').innerText()).toBe('2');
    expect(await page.getByTestId('fleet-legacy').innerText()).toBe('1');
    expect(await page.locator(`tr[data-handle="${BOT_HANDLE}"] td[data-col="sunset"]`).innerText()).toBe('2027-03-01');
    // A fresh browser asks for /favicon.ico: answered, and nothing logged as an error.
    const icon = await fetch(`${base}/favicon.ico`);
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toBe('image/x-icon');
    expect(icon.headers.get('cache-control')).toMatch(/max-age=\d+/);
    expect(errors).toEqual([]);
  });

  it('shows an issued key once: a reload shows none and issues none; a second key, a revoke and a renewal ask first', async () => {
    expect(await cb.botCall()).toBe(200);
    const { page, errors } = await signedInPage();
    await page.goto(integrationPage());
    expect(await page.getByTestId('sunset').innerText()).toBe('2027-03-01');

    await page.getByRole('button', { name: 'Issue the v1 key' }).click();
    await page.waitForURL(integrationPage());
    const shown = await page.getByLabel('v1 key', { exact: true }).inputValue();
    gw.secrets.add(shown);
    expect(await liveKeys('v1')).toBe(1);
    await page.reload();
    expect(await page.getByLabel('v1 key', { exact: true }).count()).toBe(0);
    expect(await page.content()).not.toContain(shown);
    expect(await liveKeys('v1')).toBe(1);

    // A second v1 key: asked first, and cancelling changes nothing.
    await page.getByRole('button', { name: 'Issue the v1 key' }).click();
    expect(await page.getByTestId('consequence').innerText()).toContain('already has 1 live v1 key(s)');
    await page.getByRole('link', { name: 'Cancel, change nothing' }).click();
    await page.waitForURL(integrationPage());
    expect(await liveKeys('v1')).toBe(1);

    // Revoking the legacy key names what it cuts off; its button looks unlike a harmless one.
    const revoke = page.getByRole('button', { name: /^Revoke key lgbot_|^Revoke key / }).first();
    expect(await revoke.getAttribute('class')).toBe('destructive');
    // Computed in the page (a string: the test's own TypeScript has no DOM types).
    const colours = (await page.evaluate(
      `({ destructive: getComputedStyle(document.querySelector('button.destructive')).color, harmless: getComputedStyle(document.querySelector('button:not(.destructive)')).color })`,
    )) as { destructive: string; harmless: string };
    expect(colours.destructive).not.toBe(colours.harmless);
    await page.getByRole('button', { name: 'Renew: revoke every key and issue one v1 key…' }).click();
    expect(await page.getByTestId('consequence').innerText()).toContain('the legacy bot is cut off');
    await page.goBack();
    expect(await cb.botCall()).toBe(200);
    expect(await liveKeys('legacy')).toBe(1);
    expect(errors).toEqual([]);
  });

  it('keeps the reason in the force form next to a refused switch-off; times in one format; the audit in words', async () => {
    expect(await cb.botCall()).toBe(200);
    const { page } = await signedInPage();
    await page.goto(integrationPage());
    await page.getByLabel('Reason (for the audit trail)').fill('the bot moved to v1');
    await page.getByRole('button', { name: 'Switch the old interface off' }).click();
    const refusal = page.getByTestId('refusal');
    await expect.poll(() => refusal.innerText()).toContain('within the 24 h quiet period');
    // The force form is inside the refusal, the typed reason already in it.
    expect(await refusal.getByTestId('force-form').count()).toBe(1);
    expect(await page.getByLabel('Reason', { exact: true }).inputValue()).toBe('the bot moved to v1');
    expect(await refusal.innerText()).not.toMatch(RAW_ISO);
    expect(await refusal.innerText()).toMatch(/\d{4}-\d\d-\d\d \d\d:\d\d UTC/);

    await page.getByLabel('Handle', { exact: true }).fill(BOT_HANDLE);
    await page.getByRole('button', { name: 'Force the switch-off' }).click();
    await expect.poll(() => page.getByTestId('state').innerText()).toBe('switched_off');
    const actions = await page.locator('[data-testid="audit"] td[data-col="action"]').allInnerTexts();
    expect(actions[0]).toBe('Old interface switched off, forced in the quiet period');
    expect(actions).toContain('v1 key issued');
    expect(await page.locator('main').innerText()).not.toMatch(RAW_ISO);
  });
});
