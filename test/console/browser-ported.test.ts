// "The owner says done" in a real headless Chromium: the workspace's owner marks the integration ported
// with a note; the service team finds it on the overview (its column and the ported filter), sees the
// flag beside the switch-off form, and switches the old interface off; the legacy bot is then refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../helper.js';
import { chromiumOrSkip } from '../support/browser.js';
import { BOT_HANDLE, startConsoleBrowser, type ConsoleBrowser } from '../support/console-browser.js';

const chromiumPath = chromiumOrSkip();
const LEGACY_KEY = 'browser-ported-telegram-legacy-key';

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

describe.skipIf(chromiumPath === null)('marking ported and switching off in Chromium', () => {
  it('the owner marks it ported with a note; the service team sees it on the overview, filters by it, and switches off', async () => {
    // The bot moved: it has its v1 key and calls v1 only.
    const key = await gw.issueKey(BOT_HANDLE);
    expect(
      (await gw.submit(key, { event_id: 'browser-ported-1', external_contact_id: 'telegram:501', first_name: 'Ali' }))
        .statusCode,
    ).toBe(201);
    const integrationPage = `${base}/console/integrations/${encodeURIComponent(BOT_HANDLE)}`;

    const owner = await cb.newPage();
    await cb.signIn(owner, 'bright-owner');
    await owner.waitForURL(`${base}/console/integrations`);
    await owner.goto(integrationPage);
    expect(await owner.getByTestId('ported').innerText()).toBe('Not marked ported yet.');
    // The owner is offered marking, never the service team's actions.
    expect(await owner.getByRole('button', { name: 'Switch the old interface off' }).count()).toBe(0);
    await owner.getByLabel('Note (optional)').fill('our bot calls only v1 since Monday');
    await owner.getByRole('button', { name: 'Mark as ported' }).click();
    await expect
      .poll(() => owner.getByTestId('ported').innerText())
      .toMatch(/^Ported: marked by bright-owner at \d{4}-\d\d-\d\d \d\d:\d\d UTC: our bot calls only v1 since Monday$/);
    expect(owner.url()).toBe(integrationPage);
    expect(await owner.getByRole('button', { name: /Clear the ported flag/ }).count()).toBe(0);

    const team = await cb.newPage();
    await cb.signIn(team, 'dilnoza');
    await team.waitForURL(`${base}/console/integrations`);
    const row = team.locator(`tr[data-handle="${BOT_HANDLE}"]`);
    expect(await row.locator('td[data-col="ported"]').innerText()).toMatch(
      /^ported\nby bright-owner, \d{4}-\d\d-\d\d \d\d:\d\d UTC$/,
    );
    await team.getByLabel('Marked ported').selectOption('yes');
    await team.getByRole('button', { name: 'Apply' }).click();
    await team.waitForURL(/[?&]ported=yes/);
    expect(
      await team.locator('tbody tr[data-handle]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-handle'))),
    ).toEqual([BOT_HANDLE]);

    await row.locator('th a').click();
    await team.waitForURL(integrationPage);
    expect(await team.getByTestId('switch-off-ported').innerText()).toMatch(
      /^Readiness: ready\. Marked ported by bright-owner at \d{4}-\d\d-\d\d \d\d:\d\d UTC\.$/,
    );
    await team.getByLabel('Reason (for the audit trail)').fill('the owner marked it ported');
    await team.getByRole('button', { name: 'Switch the old interface off' }).click();
    await expect.poll(() => team.getByTestId('state').innerText()).toBe('switched_off');
    // The flag stays beside the new state; the legacy bot is refused.
    expect(await team.getByTestId('ported').innerText()).toContain('Ported: marked by bright-owner');
    expect(await cb.botCall()).toBe(403);
    const actions = await team.locator('[data-testid="audit"] td[data-col="action"]').allInnerTexts();
    expect(actions.slice(0, 2)).toEqual(['Old interface switched off', 'Marked ported']);
  });
});
