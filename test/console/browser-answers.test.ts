// Item 4 in a real headless Chromium, with a v1 bot over real HTTP: the bot answers under a key no
// mapping takes; the workspace owner finds it with its YAML; the YAML goes into the rules, which are
// reloaded; "Apply stored answers" is clicked; the leads browser finds the lead by the new field and
// its page shows the value and who wrote it. A screenshot of the answers page is kept.
import { copyFileSync, cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_RULES } from '../helper.js';
import { ARTEFACTS_DIR, chromiumOrSkip } from '../support/browser.js';
import { BOT_HANDLE, startConsoleBrowser, type ConsoleBrowser } from '../support/console-browser.js';

const chromiumPath = chromiumOrSkip();
/** The README links this screenshot; `UPDATE_SCREENSHOTS=1` refreshes the copy kept there. */
const README_ANSWERS_SCREENSHOT = join(import.meta.dirname, '..', '..', 'docs', 'images', 'console-answers.png');
const rulesDir = mkdtempSync(join(tmpdir(), 'lead-gateway-browser-answers-'));
cpSync(EXAMPLE_RULES, rulesDir, { recursive: true });

let cb: ConsoleBrowser;
let bot: string;

beforeAll(async () => {
  if (chromiumPath === null) return;
  cb = await startConsoleBrowser(chromiumPath, {
    legacyKey: 'browser-answers-legacy-key',
    users: { 'bright-owner': 'brightpath' },
    rulesDir,
  });
  bot = await cb.gw.issueKey(BOT_HANDLE);
});
afterAll(() => cb?.close());

const v1 = async (path: string, body: unknown) =>
  fetch(`${cb.base}/api/integrations/v1/${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${bot}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

describe.skipIf(chromiumPath === null)('unmapped answers in Chromium', () => {
  it('shows the unmapped key with its YAML; once the rules take it, applying writes the field the lead page shows', async () => {
    const created = await v1('leads/', {
      event_id: 'browser-answers-lead',
      external_contact_id: 'tg:answers-1',
      first_name: 'Nodira',
    });
    expect(created.status).toBe(201);
    const leadId = ((await created.json()) as { lead: { id: string } }).lead.id;
    const answered = await v1('leads/answers/', {
      event_id: 'browser-answers-1',
      external_contact_id: 'tg:answers-1',
      answers: { 'English level': 'B2' },
    });
    expect(((await answered.json()) as { answers: { unmapped: string[] } }).answers.unmapped).toEqual([
      'English level',
    ]);

    const page = await cb.newPage();
    await cb.signIn(page, 'bright-owner');
    await page.waitForURL(`${cb.base}/console/integrations`);
    await page.goto(`${cb.base}/console/integrations/${encodeURIComponent(BOT_HANDLE)}`);
    await page.getByRole('link', { name: 'Unmapped answers' }).click();
    const row = page.getByRole('row', { name: /English level/ });
    await expect.poll(() => row.getByRole('cell').first().innerText()).toBe('1');
    await expect.poll(() => row.innerText()).toContain('B2');
    const shot = join(ARTEFACTS_DIR, 'console-answers.png');
    await page.screenshot({ path: shot, fullPage: true });
    if (process.env.UPDATE_SCREENSHOTS) copyFileSync(shot, README_ANSWERS_SCREENSHOT);

    // The owner copies the two snippets into the workspace's rules, and the rules are reloaded.
    const snippet = page.locator('section.snippet', { has: page.getByRole('heading', { name: 'English level' }) });
    const field = parse(await snippet.getByTestId('field-snippet').innerText());
    const mapping = parse(await snippet.getByTestId('answers-snippet').innerText());
    expect(mapping).toEqual({ answers: { 'English level': { field: 'english_level' } } });
    const file = join(rulesDir, 'brightpath.yaml');
    const rules = parse(readFileSync(file, 'utf8'));
    Object.assign(rules.workspace.custom_fields, field.custom_fields);
    Object.assign(rules.integrations.find((i: { slug: string }) => i.slug === 'telegram-bot').answers, mapping.answers);
    writeFileSync(file, stringify(rules));
    expect((await cb.gw.admin('POST', '/admin/v1/rules/reload')).statusCode).toBe(200);

    await page.getByRole('button', { name: 'Apply stored answers' }).click();
    await expect.poll(() => page.getByTestId('applied').innerText()).toContain('1 answer(s) applied: 1 written');
    expect(await page.getByTestId('no-unmapped').innerText()).toBe('No unmapped answers are waiting.');

    // The leads browser, filtered by the new field, finds the lead; its page shows the value and its writer.
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Leads' }).click();
    await page.getByLabel('Field').first().selectOption({ label: 'English level' });
    await page.getByLabel('is').first().fill('B2');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByRole('link', { name: /Nodira/ }).click();
    await page.waitForURL(`${cb.base}/console/leads/${leadId}`);
    const value = page.getByRole('row', { name: /English level/ });
    await expect.poll(() => value.innerText()).toMatch(/English level\s+B2\s+integration: brightpath:telegram-bot/);
  });
});
