// The console side of the ported flag, the v1 test key and the answers 404 list, over HTTP on both
// engines: the owner may mark ported (the one action besides applying stored answers), only the service
// team clears it, the overview shows and filters it; a test key is shown once and its calls shown apart;
// an answers 404 is listed after the usage flush, and paged further.
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_RULES, startGateway, type Gateway } from '../helper.js';
import { addUser, consoleClient, type ConsoleClient } from '../support/console.js';

let gw: Gateway;
let team: ConsoleClient;
let owner: ConsoleClient;
const PORTED = 'brightpath:website-form';
const PORTED_PAGE = `/console/integrations/${PORTED}`;
const TESTED = 'brightpath:telegram-bot';
const TESTED_PAGE = `/console/integrations/${TESTED}`;
const MISSED = 'smile-dental:booking-form';
const MISSED_PAGE = `/console/integrations/${MISSED}`;

beforeAll(async () => {
  gw = await startGateway({ console: { secureCookies: false } });
  await addUser(gw, 'dilnoza');
  await addUser(gw, 'bright-owner', 'brightpath');
  team = consoleClient(gw.app, { gw });
  owner = consoleClient(gw.app, { gw });
  expect((await team.signIn('dilnoza')).statusCode).toBe(303);
  expect((await owner.signIn('bright-owner')).statusCode).toBe(303);
});
afterAll(() => gw.close());

const audit = async (handle: string) =>
  (await gw.admin('GET', `/admin/v1/integrations/${handle}/audit`)).json<{
    items: { action: string; actor: string; reason: string | null; details: Record<string, unknown> | null }[];
  }>().items;
const ported = async (handle: string) =>
  (await gw.admin('GET', `/admin/v1/integrations/${handle}/report`)).json<{
    ported: { ported_by: string; note: string | null } | null;
  }>().ported;
const text = (html: string, testid: string) =>
  new RegExp(`data-testid="${testid}"[^>]*>([\\s\\S]*?)</(?:p|dd)>`)
    .exec(html)?.[1]
    ?.replace(/<[^>]+>/g, '')
    .replace(/\s+/g, ' ')
    .trim();
const overviewRow = (html: string, handle: string) =>
  new RegExp(`<tr data-handle="${handle}">[\\s\\S]*?</tr>`).exec(html)?.[0];

describe('the ported flag on the console', () => {
  it("is marked by the workspace's owner with a note: a redirect, then the page shows who, when and the note, and the audit trail says it", async () => {
    await gw.issueKey(PORTED);
    const before = await owner.get(PORTED_PAGE);
    expect(text(before.body, 'ported')).toBe('Not marked ported yet.');
    expect(before.body).toContain('data-testid="mark-ported"');

    const res = await owner.post(`${PORTED_PAGE}/ported`, { note: 'the bot calls only v1 now' }, PORTED_PAGE);
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(`/console/integrations/${encodeURIComponent(PORTED)}`);
    const page = await owner.get(res.headers.location as string);
    expect(text(page.body, 'ported')).toMatch(
      /^Ported: marked by bright-owner at \d{4}-\d\d-\d\d \d\d:\d\d UTC: the bot calls only v1 now$/,
    );
    expect(page.body).not.toContain('data-testid="mark-ported"');
    // Clearing is not offered to the owner.
    expect(page.body).not.toContain('/ported/clear');
    expect(page.body).toContain('data-action="marked_ported">Marked ported</td>');
    expect(await ported(PORTED)).toEqual({
      ported_by: 'bright-owner',
      ported_at: expect.any(String),
      note: 'the bot calls only v1 now',
    });
    expect((await audit(PORTED))[0]).toMatchObject({
      action: 'marked_ported',
      actor: 'bright-owner',
      details: { role: 'owner' },
    });
  });

  it('refuses a second mark on the page (409), a note with a control character (422), and changes nothing', async () => {
    const again = await owner.post(`${PORTED_PAGE}/ported`, { note: 'again' }, PORTED_PAGE);
    expect(again.statusCode).toBe(409);
    expect(again.body).toContain('data-testid="refusal"');
    expect(again.body).toContain('was marked ported by bright-owner');
    const bad = await team.post(`/console/integrations/${TESTED}/ported`, { note: 'line\nbreak' }, TESTED_PAGE);
    expect(bad.statusCode).toBe(422);
    expect(await ported(TESTED)).toBeNull();
    expect((await ported(PORTED))?.note).toBe('the bot calls only v1 now');
  });

  it("refuses the owner's clear and every other change (403), another workspace's mark (404), the flag kept", async () => {
    for (const path of ['ported/clear', 'keys/test', 'keys/issue', 'switch-off', 'rollback']) {
      const res = await owner.post(`${PORTED_PAGE}/${path}`, { confirm: 'yes', reason: 'mine' }, PORTED_PAGE);
      expect(res.statusCode, path).toBe(403);
    }
    // Another workspace's integration is not found, as its page is: nothing marked.
    expect((await owner.post(`${MISSED_PAGE}/ported`, { note: 'not mine' }, PORTED_PAGE)).statusCode).toBe(404);
    expect(await ported(MISSED)).toBeNull();
    expect((await ported(PORTED))?.ported_by).toBe('bright-owner');
    expect((await audit(PORTED))[0]!.action).toBe('marked_ported');
  });

  it('shows the flag to the service team on the overview (a column and the ported filter) and beside the switch-off form', async () => {
    const all = await team.get('/console/integrations');
    expect(all.statusCode).toBe(200);
    expect(overviewRow(all.body, PORTED)).toMatch(
      /data-col="ported"><span data-ported="yes">ported<\/span><br><small>by bright-owner, \d{4}-\d\d-\d\d \d\d:\d\d UTC/,
    );
    expect(overviewRow(all.body, TESTED)).toContain('data-ported="no"');

    const yes = await team.get('/console/integrations?ported=yes');
    expect(overviewRow(yes.body, PORTED)).toBeDefined();
    expect(overviewRow(yes.body, TESTED)).toBeUndefined();
    expect(yes.body).toContain('<option value="yes" selected>');
    const no = await team.get('/console/integrations?ported=no');
    expect(overviewRow(no.body, PORTED)).toBeUndefined();
    expect(overviewRow(no.body, TESTED)).toBeDefined();
    // Empty is every integration; a value the page does not know is ignored, as the other filters'.
    for (const q of ['ported=', 'ported=maybe']) {
      const page = await team.get(`/console/integrations?${q}`);
      expect(page.statusCode).toBe(200);
      expect(overviewRow(page.body, PORTED)).toBeDefined();
      expect(overviewRow(page.body, TESTED)).toBeDefined();
    }

    const page = await team.get(PORTED_PAGE);
    expect(text(page.body, 'switch-off-ported')).toMatch(
      /^Readiness: not ready\. Marked ported by bright-owner at \d{4}-\d\d-\d\d \d\d:\d\d UTC\.$/,
    );
    expect(page.body).toMatch(
      /<li>marked ported by bright-owner at \d{4}-\d\d-\d\d \d\d:\d\d UTC: the bot calls only v1 now<\/li>/,
    );
    expect(text((await team.get(TESTED_PAGE)).body, 'switch-off-ported')).toBe(
      'Readiness: not ready. Not marked ported yet.',
    );
  });

  it('is cleared by the service team only after a confirmation naming what it does, with a destructive button', async () => {
    const asked = await team.post(`${PORTED_PAGE}/ported/clear`, { reason: 'marked too early' }, PORTED_PAGE);
    expect(asked.statusCode).toBe(200);
    expect(asked.body).toContain('data-testid="confirm"');
    expect(asked.body).toContain('<button type="submit" class="destructive">Clear the ported flag</button>');
    expect(await ported(PORTED)).not.toBeNull();

    const res = await team.post(
      `${PORTED_PAGE}/ported/clear`,
      { confirm: 'yes', reason: 'marked too early' },
      PORTED_PAGE,
    );
    expect(res.statusCode).toBe(303);
    const page = await team.get(res.headers.location as string);
    expect(text(page.body, 'ported')).toBe('Not marked ported yet.');
    expect(page.body).toContain('data-action="ported_cleared">Ported flag cleared</td>');
    expect(await ported(PORTED)).toBeNull();
    expect((await audit(PORTED))[0]).toMatchObject({
      action: 'ported_cleared',
      actor: 'dilnoza',
      reason: 'marked too early',
    });

    const twice = await team.post(`${PORTED_PAGE}/ported/clear`, { confirm: 'yes' }, PORTED_PAGE);
    expect(twice.statusCode).toBe(409);
  });
});

describe('test mode on the console', () => {
  it('issues a v1 test key shown once after the redirect, lists it as kind test, and shows its calls as the bot author testing', async () => {
    const res = await team.post(`${TESTED_PAGE}/keys/test`, {}, TESTED_PAGE);
    expect(res.statusCode).toBe(303);
    const shown = await team.get(res.headers.location as string);
    const key = /id="issued-key"[^>]*value="([^"]+)"/.exec(shown.body)?.[1];
    expect(key).toMatch(/^lgtest_/);
    gw.secrets.add(key!);
    expect(shown.body).toContain('The new v1 test key');
    const reload = await team.get(TESTED_PAGE);
    expect(reload.body).not.toContain(key);
    expect(reload.body).toMatch(/<code>lgtest_[^<]*<\/code><\/th><td>test<\/td>/);
    expect(text(reload.body, 'test-calls')).toBe('No test calls in the last 7 days. 1 live test key(s).');
    expect((await audit(TESTED))[0]).toMatchObject({ action: 'test_key_issued', actor: 'dilnoza' });
    expect(reload.body).toContain('data-action="test_key_issued">v1 test key issued (for the bot author)</td>');

    expect(
      (await gw.submit(key!, { event_id: 'console-test-1', external_contact_id: 'telegram:t1', first_name: 'Ali' }))
        .statusCode,
    ).toBe(201);
    const after = await team.get(TESTED_PAGE);
    expect(text(after.body, 'test-calls')).toMatch(
      /^The bot author is testing: 1 test call\(s\) in 24 h, 1 in 7 d, the last \d{4}-\d\d-\d\d \d\d:\d\d UTC\. 1 live test key\(s\)\.$/,
    );
    expect(shown.body).toContain('<label for="issued-key">v1 test key</label>');
    // Never v1 traffic; the overview says the bot author is testing beside the v1 calls.
    expect(after.body).toContain('the v1 interface has not been called yet');
    const row = overviewRow((await team.get('/console/integrations')).body, TESTED);
    expect(row).toContain(
      '<td class="num" data-col="v1_7d">0<br><small data-testid="testing">bot author testing: 1 test call(s)</small></td>',
    );
  });
});

describe('the answers 404 list on the console', () => {
  const answers = (key: string, eventId: string, externalContactId: string) =>
    gw.app.inject({
      method: 'POST',
      url: '/api/integrations/v1/leads/answers/',
      headers: { authorization: `Bearer ${key}` },
      payload: { event_id: eventId, external_contact_id: externalContactId, answers: { laptop: 'yes' } },
    });

  it('lists an answers 404 on the integration page and on its own page, and refuses a cursor that is not one', async () => {
    const key = await gw.issueKey(MISSED);
    const empty = await team.get(MISSED_PAGE);
    expect(text(empty.body, 'not-found-count')).toBe('0 external_contact_id(s), 0 call(s) in all.');
    expect((await answers(key, 'console-nf-1', 'telegram:404')).statusCode).toBe(404);
    expect((await answers(key, 'console-nf-2', 'telegram:404')).statusCode).toBe(404);

    // The page's report flushes the usage counts first, as the admin API's does.
    const page = await team.get(MISSED_PAGE);
    expect(text(page.body, 'not-found-count')).toBe('1 external_contact_id(s), 2 call(s) in all.');
    expect(page.body).toMatch(
      /<tr data-external-id="telegram:404"><th scope="row"><code>telegram:404<\/code><\/th><td class="num">2<\/td>/,
    );
    expect(page.body).toContain('none found');
    expect(page.body).toContain('href="#link-heading">re-run linking</a>');

    const list = await team.get(`${MISSED_PAGE}/not-found`);
    expect(list.statusCode).toBe(200);
    expect(list.body).toContain('data-external-id="telegram:404"');
    expect(list.body).not.toContain('data-testid="not-found-more"');

    // Past the report's 20, the page links on with the report's cursor, and the list page follows it.
    for (let n = 1; n <= 20; n++)
      expect((await answers(key, `console-nf-more-${n}`, `telegram:9${String(n).padStart(2, '0')}`)).statusCode).toBe(
        404,
      );
    const full = await team.get(MISSED_PAGE);
    expect(text(full.body, 'not-found-count')).toBe('21 external_contact_id(s), 22 call(s) in all.');
    expect(full.body.match(/<tr data-external-id=/g)).toHaveLength(20);
    const more = /href="([^"]+)" data-testid="not-found-more"/.exec(full.body)?.[1]?.replaceAll('&amp;', '&');
    expect(more).toMatch(new RegExp(`^/console/integrations/${encodeURIComponent(MISSED)}/not-found\\?after=`));
    const rest = await team.get(more!);
    expect(rest.statusCode).toBe(200);
    expect(rest.body.match(/<tr data-external-id=/g)).toHaveLength(1);
    expect(rest.body).not.toContain('data-testid="not-found-more"');
    expect((await team.get(`${MISSED_PAGE}/not-found`)).body.match(/<tr data-external-id=/g)).toHaveLength(21);

    const bad = await team.get(`${MISSED_PAGE}/not-found?after=nonsense`);
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('is not a cursor this list answered');
    // Another workspace's list is not found, as its page is.
    expect((await owner.get(`${MISSED_PAGE}/not-found`)).statusCode).toBe(404);
  });
});

describe('an answers 404 of a person with an unlinked legacy lead', () => {
  it('names the lead and why on the integration page; re-run linking binds it and the entry names it no more', async () => {
    // A legacy lead made while the integration had no legacy person-id rule stays unlinked (test/migration/porting.test.ts).
    const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-rules-'));
    cpSync(EXAMPLE_RULES, dir, { recursive: true });
    const rulesFile = join(dir, 'brightpath.yaml');
    const rule = '      external_contact_id: "telegram:{extra_data.telegram_id}"\n';
    writeFileSync(rulesFile, readFileSync(rulesFile, 'utf8').replace(rule, ''));
    const other = await startGateway({ rulesDir: dir, console: { secureCookies: false } });
    try {
      await addUser(other, 'dilnoza');
      const browser = consoleClient(other.app, { gw: other });
      expect((await browser.signIn('dilnoza')).statusCode).toBe(303);
      const tg = `/admin/v1/integrations/${TESTED}`;
      other.secrets.add('tg-console-legacy-key');
      await other.admin('POST', `${tg}/keys/import`, { key: 'tg-console-legacy-key' });
      const lead = (
        await other.app.inject({
          method: 'POST',
          url: '/api/bots/api/leads/',
          headers: { 'x-bot-api-key': 'tg-console-legacy-key' },
          payload: { first_name: 'Old', extra_data: { telegram_id: 778 } },
        })
      ).json<{ id: string }>();
      const key = await other.issueKey(TESTED);
      writeFileSync(rulesFile, readFileSync(rulesFile, 'utf8').replace('    legacy:\n', `    legacy:\n${rule}`));
      expect((await other.admin('POST', '/admin/v1/rules/reload')).statusCode).toBe(200);
      const ask = () =>
        other.app.inject({
          method: 'POST',
          url: '/api/integrations/v1/leads/answers/',
          headers: { authorization: `Bearer ${key}` },
          payload: { event_id: 'old-1', external_contact_id: 'telegram:778', answers: { laptop: 'yes' } },
        });
      expect((await ask()).statusCode).toBe(404);

      const page = await browser.get(TESTED_PAGE);
      const row = /<tr data-external-id="telegram:778">[\s\S]*?<\/tr>/.exec(page.body)?.[0];
      expect(row).toContain(`<li data-code="not_linked"><code>${lead.id}</code>: not linked yet: linking`);

      const relinked = await browser.post(`${TESTED_PAGE}/relink`, {}, TESTED_PAGE);
      expect(relinked.statusCode).toBe(303);
      const after = await browser.get(TESTED_PAGE);
      expect(/<tr data-external-id="telegram:778">[\s\S]*?<\/tr>/.exec(after.body)?.[0]).toContain('none found');
      expect((await ask()).statusCode).toBe(200);
    } finally {
      await other.close();
    }
  });
});
