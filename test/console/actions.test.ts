// The integration page's actions over HTTP: the same rules as the admin API, audited under the signed-in
// person's name; the v1 key shown once; a switch-off refused in the quiet period with the reason and the
// last call, forced only by typing the handle; roll back; renew; revoke one key; owners only read.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../helper.js';
import { addUser, consoleClient, type ConsoleClient } from '../support/console.js';

let gw: Gateway;
let team: ConsoleClient;
let owner: ConsoleClient;
const HANDLE = 'brightpath:telegram-bot';
const PAGE = `/console/integrations/${HANDLE}`;
const LEGACY_KEY = 'actions-telegram-legacy-key';

beforeAll(async () => {
  gw = await startGateway({ console: { secureCookies: false } });
  gw.secrets.add(LEGACY_KEY);
  await addUser(gw, 'dilnoza');
  await addUser(gw, 'bright-owner', 'brightpath');
  await addUser(gw, 'smile-owner', 'smile-dental');
  team = consoleClient(gw.app, { gw });
  owner = consoleClient(gw.app, { gw });
  expect((await team.signIn('dilnoza')).statusCode).toBe(303);
  expect((await owner.signIn('bright-owner')).statusCode).toBe(303);
});
afterAll(() => gw.close());

const legacyCall = (key = LEGACY_KEY) =>
  gw.app.inject({ method: 'GET', url: '/api/bots/api/boards/', headers: { 'x-bot-api-key': key } });
const audit = async () =>
  (await gw.admin('GET', `/admin/v1/integrations/${HANDLE}/audit`)).json<{
    items: { action: string; actor: string; reason: string | null }[];
  }>().items;
const state = async () =>
  (await gw.admin('GET', `/admin/v1/integrations/${HANDLE}/report`)).json<{ state: string }>().state;
const keyFrom = (html: string) => /id="issued-key"[^>]*value="([^"]+)"/.exec(html)?.[1];
const liveV1 = async () =>
  (await gw.admin('GET', `/admin/v1/integrations/${HANDLE}/keys`))
    .json<{ items: { kind: string; revoked_at: string | null }[] }>()
    .items.filter((k) => k.kind === 'v1' && k.revoked_at === null);
/** Posts an action and follows its redirect: the page that shows what it did. */
const postAndFollow = async (url: string, fields: Record<string, string>) => {
  const res = await team.post(url, fields, PAGE);
  expect(res.statusCode).toBe(303);
  return team.get(res.headers.location as string);
};

describe('integration page actions', () => {
  it('imports a legacy key typed into the form, never showing it back; a second import is refused on the page', async () => {
    const res = await team.post(`${PAGE}/keys/import`, { key: LEGACY_KEY }, PAGE);
    expect(res.statusCode).toBe(303);
    expect((await legacyCall()).statusCode).toBe(200);
    expect((await audit())[0]).toMatchObject({ action: 'legacy_key_imported', actor: 'dilnoza' });
    const again = await team.post(`${PAGE}/keys/import`, { key: LEGACY_KEY }, PAGE);
    expect(again.statusCode).toBe(409);
    expect(again.body).toContain('This key is already known to the gateway.');
    expect(again.body).not.toContain(LEGACY_KEY);
    const short = await team.post(`${PAGE}/keys/import`, { key: 'short' }, PAGE);
    expect(short.statusCode).toBe(422);
    expect(short.body).toContain('key: must be at least 8 characters');
  });

  it('issues the v1 key with a redirect; the page it leads to shows the key once, a reload never; the key then works', async () => {
    const res = await team.post(`${PAGE}/keys/issue`, {}, PAGE);
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(`/console/integrations/${encodeURIComponent(HANDLE)}`);
    expect(res.body).not.toContain('issued-key');
    const shown = await team.get(res.headers.location as string);
    expect(shown.headers['cache-control']).toBe('no-store');
    const key = keyFrom(shown.body)!;
    expect(key).toMatch(/\S{20,}/);
    gw.secrets.add(key);
    expect(shown.body).toContain('data-copy="issued-key"');
    // A reload shows no key and issues none.
    const reload = await team.get(PAGE);
    expect(reload.body).not.toContain(key);
    expect(reload.body).not.toContain('id="issued-key"');
    expect((await liveV1()).length).toBe(1);
    expect((await gw.submit(key, { event_id: 'console-issued-1', first_name: 'Ali' })).statusCode).toBe(201);
    expect(await state()).toBe('migrating');
    expect((await audit())[0]).toMatchObject({ action: 'v1_key_issued', actor: 'dilnoza' });
  });

  it('asks before a second live v1 key: without confirm nothing is issued and the step says why', async () => {
    const asked = await team.post(`${PAGE}/keys/issue`, { reason: 'second bot' }, PAGE);
    expect(asked.statusCode).toBe(200);
    expect(asked.body).toContain('data-testid="confirm"');
    expect(asked.body).toContain('already has 1 live v1 key(s)');
    expect(asked.body).toContain('name="confirm" value="yes"');
    expect(asked.body).toContain('value="second bot"');
    expect((await liveV1()).length).toBe(1);
    expect((await audit())[0]).toMatchObject({ action: 'v1_key_issued' });
  });

  it('shows when each key was last used: the legacy and the v1 key each at its own last call, a key never used as never', async () => {
    const unused = await postAndFollow(`${PAGE}/keys/issue`, { confirm: 'yes' });
    const unusedPrefix = /Its prefix is <code>([^<]+)<\/code>/.exec(unused.body)![1]!;
    gw.secrets.add(keyFrom(unused.body)!);
    expect((await legacyCall()).statusCode).toBe(200);
    const page = (await team.get(PAGE)).body;
    const keys = /<table data-testid="keys">([\s\S]*?)<\/table>/.exec(page)![1]!;
    const lastUsed = (kind: string) =>
      [
        ...keys.matchAll(
          /<tr><th scope="row"><code>([^<]*)<\/code><\/th><td>(\w+)<\/td>[\s\S]*?data-col="last-used">([^<]+)</g,
        ),
      ]
        .filter((m) => m[2] === kind)
        .map((m) => [m[1], m[3]]);
    const today = new Date().toISOString().slice(0, 10);
    expect(lastUsed('legacy')).toEqual([[expect.any(String), expect.stringContaining(today)]]);
    expect(lastUsed('v1')).toContainEqual([expect.not.stringMatching(unusedPrefix), expect.stringContaining(today)]);
    expect(lastUsed('v1')).toContainEqual([unusedPrefix, 'never']);
    // The admin API lists the same.
    const listed = (await gw.admin('GET', `/admin/v1/integrations/${HANDLE}/keys`)).json<{
      items: { kind: string; prefix: string; last_used_at: string | null }[];
    }>().items;
    expect(listed.find((k) => k.prefix === unusedPrefix)?.last_used_at).toBeNull();
    expect(listed.find((k) => k.kind === 'legacy')?.last_used_at).toMatch(new RegExp(`^${today}T`));
  });

  it('refuses a switch-off in the quiet period with the reason and the last legacy call, and a force without the handle typed', async () => {
    expect((await legacyCall()).statusCode).toBe(200);
    const refused = await team.post(`${PAGE}/switch-off`, { reason: 'moved' }, PAGE);
    expect(refused.statusCode).toBe(409);
    expect(refused.body).toContain('within the 24 h quiet period');
    expect(refused.body).toMatch(/data-testid="last-legacy-call">\d{4}-\d\d-\d\d \d\d:\d\d UTC</);
    expect(refused.body).toContain('GET /api/bots/api/boards/');
    expect(refused.body).toContain(`action="/console/integrations/${encodeURIComponent(HANDLE)}/switch-off/force"`);
    // The force form stands inside the refusal, with the reason typed kept.
    const alert = /<div class="alert" role="alert" data-testid="refusal">([\s\S]*?)<\/div>/.exec(refused.body)![1]!;
    expect(alert).toContain('data-testid="force-form"');
    expect(alert).toMatch(/id="force-reason" name="reason" maxlength="1000" value="moved"/);
    // The refusal's time is in the console's one format, not raw ISO.
    expect(alert).not.toMatch(/\d{4}-\d\d-\d\dT\d\d:\d\d/);

    const wrong = await team.post(`${PAGE}/switch-off/force`, { confirm: 'brightpath:telegram' }, PAGE);
    expect(wrong.statusCode).toBe(422);
    expect(wrong.body).toContain(`handle, ${HANDLE}, exactly. Nothing was changed.`);
    expect(await state()).toBe('migrating');

    const forced = await team.post(`${PAGE}/switch-off/force`, { confirm: HANDLE, reason: 'bot moved to v1' }, PAGE);
    expect(forced.statusCode).toBe(303);
    expect(await state()).toBe('switched_off');
    expect((await audit())[0]).toMatchObject({
      action: 'switched_off_forced',
      actor: 'dilnoza',
      reason: 'bot moved to v1',
    });
    // The bot's next call is refused, and the page counts it as refused on its route.
    expect((await legacyCall()).statusCode).toBe(403);
    const page = (await team.get(PAGE)).body;
    expect(page).toContain('legacy calls are answered 403');
    expect(page).toMatch(/<tr data-route="GET \/api\/bots\/api\/boards\/">[\s\S]*?data-col="refused">1</);
  });

  it('rolls back with a reason (required), and the old key works again', async () => {
    const none = await team.post(`${PAGE}/rollback`, {}, PAGE);
    expect(none.statusCode).toBe(422);
    expect(await state()).toBe('switched_off');
    expect((await team.post(`${PAGE}/rollback`, { reason: 'bot still needed' }, PAGE)).statusCode).toBe(303);
    expect(await state()).toBe('migrating');
    expect((await legacyCall()).statusCode).toBe(200);
    expect((await audit())[0]).toMatchObject({ action: 'rolled_back', actor: 'dilnoza', reason: 'bot still needed' });
    expect((await team.post(`${PAGE}/rollback`, { reason: 'twice' }, PAGE)).statusCode).toBe(409);
  });

  it('revokes one key with its own button, and renews: every key revoked, one new v1 key shown once', async () => {
    const keys = async () =>
      (await gw.admin('GET', `/admin/v1/integrations/${HANDLE}/keys`)).json<{
        items: { id: string; kind: string; revoked_at: string | null }[];
      }>().items;
    const legacy = (await keys()).find((k) => k.kind === 'legacy' && k.revoked_at === null)!;
    expect((await team.get(PAGE)).body).toContain(`/keys/${legacy.id}/revoke`);
    // Asked first: the confirmation names the consequence and changes nothing.
    const asked = await team.post(`${PAGE}/keys/${legacy.id}/revoke`, {}, PAGE);
    expect(asked.statusCode).toBe(200);
    expect(asked.body).toContain('data-testid="confirm"');
    expect(asked.body).toContain('The legacy bot calling with');
    expect(asked.body).toContain('cut off');
    expect((await legacyCall()).statusCode).toBe(200);
    expect((await team.post(`${PAGE}/keys/${legacy.id}/revoke`, { confirm: 'yes' }, PAGE)).statusCode).toBe(303);
    expect((await legacyCall()).statusCode).toBe(401);
    expect((await audit())[0]).toMatchObject({ action: 'key_revoked', actor: 'dilnoza' });
    expect((await team.post(`${PAGE}/keys/${legacy.id}/revoke`, { confirm: 'yes' }, PAGE)).statusCode).toBe(409);

    const liveBefore = (await keys()).filter((k) => k.revoked_at === null).length;
    const askedRenew = await team.post(`${PAGE}/keys/renew`, {}, PAGE);
    expect(askedRenew.statusCode).toBe(200);
    expect(askedRenew.body).toContain('Every live key of');
    expect((await keys()).filter((k) => k.revoked_at === null)).toHaveLength(liveBefore);
    const renewed = await postAndFollow(`${PAGE}/keys/renew`, { confirm: 'yes' });
    expect(renewed.body).toContain('Keys renewed:');
    const key = keyFrom(renewed.body)!;
    gw.secrets.add(key);
    expect((await keys()).filter((k) => k.revoked_at === null)).toHaveLength(1);
    expect((await gw.submit(key, { event_id: 'console-renewed-1', first_name: 'Vali' })).statusCode).toBe(201);
    expect((await audit())[0]).toMatchObject({ action: 'keys_renewed', actor: 'dilnoza' });
  });

  it("lets a workspace owner read their integration but not act: 403, and another workspace's is a 404", async () => {
    const before = (await audit()).length;
    const page = await owner.get(PAGE);
    expect(page.statusCode).toBe(200);
    expect(page.body).not.toContain('/keys/issue');
    for (const action of ['keys/issue', 'keys/renew', 'switch-off', 'rollback', 'relink']) {
      const res = await owner.post(`${PAGE}/${action}`, { reason: 'x' }, PAGE);
      expect(res.statusCode, action).toBe(403);
    }
    const stranger = consoleClient(gw.app, { gw });
    await stranger.signIn('smile-owner');
    expect((await stranger.post(`${PAGE}/keys/issue`, {}, '/console/integrations')).statusCode).toBe(404);
    expect((await audit()).length).toBe(before);
  });
});
