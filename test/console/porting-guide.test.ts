// The porting guide's console page on both engines: the service team and the workspace's owner read
// the guide the admin API answers, each v1 example in a <pre> with its copy button, the bot's own
// member names escaped; another workspace's owner finds no such integration; reading it counts nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../helper.js';
import { addUser, consoleClient, type ConsoleClient } from '../support/console.js';
import type { PortingGuide } from '../../src/porting/guide.js';

let gw: Gateway;
let team: ConsoleClient;
let owner: ConsoleClient;
let stranger: ConsoleClient;
const HANDLE = 'brightpath:telegram-bot';
const PAGE = `/console/integrations/${HANDLE}/porting-guide`;
const KEY = 'console-porting-guide-legacy-key';
const HOSTILE = '<img src=x onerror=alert(1)>';

const unescaped = (html: string) =>
  html
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'")
    .replaceAll('&amp;', '&');
const examplesOf = (html: string) =>
  [...html.matchAll(/<pre id="(example-\d+)" data-testid="example">([\s\S]*?)<\/pre>/g)].map((m) => ({
    id: m[1]!,
    text: unescaped(m[2]!),
  }));

beforeAll(async () => {
  gw = await startGateway({ console: { secureCookies: false } });
  await addUser(gw, 'dilnoza');
  await addUser(gw, 'bright-owner', 'brightpath');
  await addUser(gw, 'smile-owner', 'smile-dental');
  team = consoleClient(gw.app, { gw });
  owner = consoleClient(gw.app, { gw });
  stranger = consoleClient(gw.app, { gw });
  for (const [client, name] of [
    [team, 'dilnoza'],
    [owner, 'bright-owner'],
    [stranger, 'smile-owner'],
  ] as const)
    expect((await client.signIn(name)).statusCode).toBe(303);
  gw.secrets.add(KEY);
  expect((await gw.admin('POST', `/admin/v1/integrations/${HANDLE}/keys/import`, { key: KEY })).statusCode).toBe(201);
  // The bot's call names a member of its own choosing: the guide lists it as ignored.
  const created = await gw.app.inject({
    method: 'POST',
    url: '/api/bots/api/leads/',
    headers: { 'x-bot-api-key': KEY },
    payload: {
      first_name: 'Madina',
      phone: '+998 90 555 12 34',
      extra_data: { telegram_id: 4242, course: 'python' },
      [HOSTILE]: 'x',
    },
  });
  expect(created.statusCode).toBe(201);
});
afterAll(() => gw.close());

describe('the porting guide page', () => {
  it("shows the owner the guide the admin API answers: the fix-by date, each v1 example in a <pre> with a copy button, the bot's member names escaped", async () => {
    const guide = (await gw.admin('GET', `/admin/v1/integrations/${HANDLE}/porting-guide`)).json<PortingGuide>();
    const res = await owner.get(PAGE);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toMatch(/data-testid="fix-by">2027-03-01</);
    const wanted = guide.routes.flatMap((r) => (r.v1_example ? [r.v1_example.curl] : []));
    expect(wanted.length).toBeGreaterThan(0);
    const shown = examplesOf(res.body);
    expect(shown.map((e) => e.text)).toEqual(wanted);
    for (const { id } of shown)
      expect(res.body).toContain(`<button type="button" class="copy" data-copy="${id}">Copy</button>`);
    // Not a field's name: shown as the samples show such names, and escaped as every name is.
    expect(guide.ignored_legacy_fields.map((f) => f.field)).toEqual(['<member-1>']);
    expect(res.body).not.toContain(HOSTILE);
    expect(res.body).toContain('<code>&lt;member-1&gt;</code>');
    expect(res.body).toContain('<script src="/console/static/console.js"');
  });

  it("is linked from the integration's page, and shown to the service team too", async () => {
    expect((await owner.get(`/console/integrations/${HANDLE}`)).body).toContain(
      `href="/console/integrations/${encodeURIComponent(HANDLE)}/porting-guide"`,
    );
    const res = await team.get(PAGE);
    expect(res.statusCode).toBe(200);
    expect(examplesOf(res.body).length).toBeGreaterThan(0);
  });

  it("is not found for another workspace's owner, and asks who you are when nobody is signed in", async () => {
    const res = await stranger.get(PAGE);
    expect(res.statusCode).toBe(404);
    expect(res.body).not.toContain('data-testid="example"');
    const anonymous = await gw.app.inject({ method: 'GET', url: PAGE });
    expect(anonymous.statusCode).toBe(303);
    expect(anonymous.headers.location).toMatch(/^\/console\/sign-in/);
  });

  it('counts no legacy call: the report is the same before and after reading it', async () => {
    const report = async () =>
      (await gw.admin('GET', `/admin/v1/integrations/${HANDLE}/report`)).json<{ legacy: unknown }>().legacy;
    const before = await report();
    expect((await owner.get(PAGE)).statusCode).toBe(200);
    expect(await report()).toEqual(before);
  });
});
