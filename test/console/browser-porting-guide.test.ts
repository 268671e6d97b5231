// The porting guide in a real headless Chromium: a legacy bot made its calls; the workspace's owner
// opens the guide from the integration page, copies a v1 example with its button (the clipboard holds
// the command the guide shows), and marks the integration ported; the service team sees the mark on
// the overview and switches off, forcing it past the quiet period the bot's calls started.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../helper.js';
import { chromiumOrSkip } from '../support/browser.js';
import { BOT_HANDLE, startConsoleBrowser, type ConsoleBrowser } from '../support/console-browser.js';
import type { PortingGuide } from '../../src/porting/guide.js';

const chromiumPath = chromiumOrSkip();
const LEGACY_KEY = 'browser-guide-telegram-legacy-key';

let cb: ConsoleBrowser;
let gw: Gateway;
let base: string;

beforeAll(async () => {
  if (chromiumPath === null) return;
  cb = await startConsoleBrowser(chromiumPath, {
    legacyKey: LEGACY_KEY,
    users: { dilnoza: null, 'bright-owner': 'brightpath' },
  });
  ({ gw, base } = cb);
});
afterAll(() => cb?.close());

describe.skipIf(chromiumPath === null)('the porting guide in Chromium', () => {
  it('the owner opens the guide, copies an example and marks ported; the service team sees it on the overview and switches off', async () => {
    // The bot's legacy lead: the guide's sample and its v1 example.
    const created = await fetch(`${base}/api/bots/api/leads/`, {
      method: 'POST',
      headers: { 'x-bot-api-key': LEGACY_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({
        first_name: 'Madina',
        phone: '+998 90 555 12 34',
        extra_data: { telegram_id: 4242, course: 'python' },
      }),
    });
    expect(created.status).toBe(201);
    await gw.issueKey(BOT_HANDLE);
    const guide = (await gw.admin('GET', `/admin/v1/integrations/${BOT_HANDLE}/porting-guide`)).json<PortingGuide>();
    const example = guide.routes.find((r) => r.route === 'POST /api/bots/api/leads/')!.v1_example!.curl;
    expect(example).toContain('/api/integrations/v1/leads/');
    const integrationPage = `${base}/console/integrations/${encodeURIComponent(BOT_HANDLE)}`;

    // The clipboard permissions let the copy button write and the test read back what it wrote.
    const owner = await cb.newPage({ permissions: ['clipboard-read', 'clipboard-write'] });
    await cb.signIn(owner, 'bright-owner');
    await owner.waitForURL(`${base}/console/integrations`);
    await owner.goto(integrationPage);
    await owner.getByRole('link', { name: 'Porting guide' }).click();
    await owner.waitForURL(`${integrationPage}/porting-guide`);
    expect(await owner.getByTestId('fix-by').innerText()).toBe('2027-03-01');
    const article = owner.locator('article[data-route="POST /api/bots/api/leads/"]');
    expect(await article.getByTestId('example').innerText()).toBe(example);
    await article.getByRole('button', { name: 'Copy' }).click();
    await expect.poll(() => article.getByRole('status').innerText()).toBe('Copied');
    expect(await owner.evaluate('navigator.clipboard.readText()')).toBe(example);

    await owner.getByRole('link', { name: guide.integration.name }).click();
    await owner.waitForURL(integrationPage);
    await owner.getByLabel('Note (optional)').fill('sends the guide examples now');
    await owner.getByRole('button', { name: 'Mark as ported' }).click();
    await expect
      .poll(() => owner.getByTestId('ported').innerText())
      .toMatch(/^Ported: marked by bright-owner at .*: sends the guide examples now$/);

    const team = await cb.newPage();
    await cb.signIn(team, 'dilnoza');
    await team.waitForURL(`${base}/console/integrations`);
    const row = team.locator(`tr[data-handle="${BOT_HANDLE}"]`);
    expect(await row.locator('td[data-col="ported"]').innerText()).toMatch(
      /^ported\nby bright-owner, \d{4}-\d\d-\d\d \d\d:\d\d UTC$/,
    );
    await row.locator('th a').click();
    await team.waitForURL(integrationPage);
    await team.getByLabel('Reason (for the audit trail)').fill('the owner marked it ported');
    await team.getByRole('button', { name: 'Switch the old interface off' }).click();
    // The bot's legacy lead is within the quiet period: refused, then forced by typing the handle.
    await expect.poll(() => team.getByRole('alert').innerText()).toContain('within the 24 h quiet period');
    await team.getByLabel('Handle', { exact: true }).fill(BOT_HANDLE);
    await team.getByRole('button', { name: 'Force the switch-off' }).click();
    await expect.poll(() => team.getByTestId('state').innerText()).toBe('switched_off');
    expect(await cb.botCall()).toBe(403);
  });
});
