// The key an action issues reaches the page its redirect leads to as a one-time value of the session:
// sealed in the session's row (never the key itself), shown by that page once, cleared as it is shown,
// and never shown to another session.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../helper.js';
import { addUser, consoleClient, type ConsoleClient } from '../support/console.js';
import { seal, unseal, WAITING_KEYS_MAX, type Flash } from '../../src/console/flash.js';
import { runRetention } from '../../src/retention/retention.js';

let gw: Gateway;
let team: ConsoleClient;
let colleague: ConsoleClient;
const HANDLE = 'smile-dental:booking-form';
const PAGE = `/console/integrations/${HANDLE}`;
const OVERVIEW = '/console/integrations';

beforeAll(async () => {
  gw = await startGateway({ console: { secureCookies: false } });
  await addUser(gw, 'dilnoza');
  await addUser(gw, 'aziza');
  team = consoleClient(gw.app, { gw });
  colleague = consoleClient(gw.app, { gw });
  expect((await team.signIn('dilnoza')).statusCode).toBe(303);
  expect((await colleague.signIn('aziza')).statusCode).toBe(303);
});
afterAll(() => gw.close());

const keyFrom = (html: string) => /id="issued-key"[^>]*value="([^"]+)"/.exec(html)?.[1];
/** The flash column of every session row (the dump's rows hold it last: migration 17 added it). */
const flashes = async () => (await gw.inspect.dump('console_sessions')).map((row) => row.at(-1));

describe('the one-time key of a console session', () => {
  it('is kept sealed until its page shows it, then cleared; a reload and another session see nothing', async () => {
    const res = await team.post(`${PAGE}/keys/issue`, {}, PAGE);
    expect(res.statusCode).toBe(303);
    const waiting = (await flashes()).filter((f) => f !== null);
    expect(waiting).toHaveLength(1);

    // Another person's session is not shown it, nor is another integration's page.
    expect((await colleague.get(PAGE)).body).not.toContain('id="issued-key"');
    expect((await team.get('/console/integrations/brightpath:telegram-bot')).body).not.toContain('id="issued-key"');
    const shown = await team.get(res.headers.location as string);
    const key = keyFrom(shown.body)!;
    gw.secrets.add(key);
    expect(key).toMatch(/\S{20,}/);
    // Sealed: the row never held the key, nor any part of it that a prefix does not already show.
    expect(String(waiting[0])).not.toContain(key.slice(-16));
    expect((await flashes()).every((f) => f === null)).toBe(true);

    expect((await team.get(PAGE)).body).not.toContain('id="issued-key"');
    const keys = (await gw.admin('GET', `/admin/v1/integrations/${HANDLE}/keys`)).json<{
      items: { kind: string; revoked_at: string | null }[];
    }>().items;
    expect(keys.filter((k) => k.kind === 'v1' && k.revoked_at === null)).toHaveLength(1);
  });

  it('answers relink and a confirmed renewal with a redirect; the renewed key is shown on the page it leads to', async () => {
    const res = await team.post(`${PAGE}/relink`, {}, PAGE);
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(`/console/integrations/${encodeURIComponent(HANDLE)}`);
    const confirmed = await team.post(`${PAGE}/keys/renew`, { confirm: 'yes', reason: 'rotated' }, PAGE);
    expect(confirmed.statusCode).toBe(303);
    const shown = await team.get(confirmed.headers.location as string);
    gw.secrets.add(keyFrom(shown.body)!);
    expect(shown.body).toContain('Keys renewed: 1 key(s) revoked');
  });

  it('refuses a malformed key id in the path before any handler: the 400 page, nothing changed', async () => {
    const res = await team.post(`${PAGE}/keys/not-a-key/revoke`, { confirm: 'yes' }, PAGE);
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('data-code="bad-request"');
  });

  it('finding 7: keeps every key issued before a page showed it, shows each once, and refuses an issue past WAITING_KEYS_MAX before a key is made', async () => {
    const other = 'brightpath:website-form';
    // Two test keys issued (two tabs) before either redirect is followed, and one for another integration;
    // each form's CSRF token from the overview, which shows no key.
    for (let i = 0; i < 2; i++) expect((await team.post(`${PAGE}/keys/test`, {}, OVERVIEW)).statusCode).toBe(303);
    expect((await team.post(`/console/integrations/${other}/keys/test`, {}, OVERVIEW)).statusCode).toBe(303);
    const page = (await team.get(PAGE)).body;
    const shown = [...page.matchAll(/data-testid="issued-key"[^>]*|value="(lgtest_[^"]+)"/g)]
      .map((m) => m[1])
      .filter((k): k is string => k !== undefined);
    for (const key of shown) gw.secrets.add(key);
    expect(new Set(shown).size).toBe(2);
    const live = (await gw.admin('GET', `/admin/v1/integrations/${HANDLE}/keys`)).json<{
      items: { kind: string; prefix: string; revoked_at: string | null }[];
    }>().items;
    for (const key of shown)
      expect(live.some((k) => k.kind === 'test' && k.revoked_at === null && key.startsWith(k.prefix))).toBe(true);
    expect((await team.get(PAGE)).body).not.toContain('data-testid="issued-key"');
    // The other integration's key waited for its own page.
    const otherPage = (await team.get(`/console/integrations/${other}`)).body;
    const otherKey = /value="(lgtest_[^"]+)"/.exec(otherPage)?.[1];
    expect(otherKey).toBeDefined();
    gw.secrets.add(otherKey!);

    // Past the cap a further issue is refused, and no key is made.
    for (let i = 0; i < WAITING_KEYS_MAX; i++)
      expect((await team.post(`${PAGE}/keys/test`, {}, OVERVIEW)).statusCode).toBe(303);
    const before = (await gw.admin('GET', `/admin/v1/integrations/${HANDLE}/keys`)).json<{ items: unknown[] }>().items
      .length;
    const refused = await team.post(`${PAGE}/keys/test`, {}, OVERVIEW);
    expect(refused.statusCode).toBe(409);
    expect(
      (await gw.admin('GET', `/admin/v1/integrations/${HANDLE}/keys`)).json<{ items: unknown[] }>().items.length,
    ).toBe(before);
    const all = (await team.get(PAGE)).body;
    const waited = [...all.matchAll(/value="(lgtest_[^"]+)"/g)].map((m) => m[1]!);
    for (const key of waited) gw.secrets.add(key);
    expect(waited).toHaveLength(WAITING_KEYS_MAX);
  });

  it('finding 7: revokes, audited as never shown, a key whose session ended before a page showed it, and leaves a shown key live', async () => {
    const leaver = consoleClient(gw.app, { gw });
    expect((await leaver.signIn('dilnoza')).statusCode).toBe(303);
    // One key shown, one issued right before signing out: its redirect never followed.
    expect((await leaver.post(`${PAGE}/keys/test`, {}, OVERVIEW)).statusCode).toBe(303);
    const shownKey = /value="(lgtest_[^"]+)"/.exec((await leaver.get(PAGE)).body)![1]!;
    gw.secrets.add(shownKey);
    expect((await leaver.post(`${PAGE}/keys/test`, {}, OVERVIEW)).statusCode).toBe(303);
    expect((await leaver.post('/console/sign-out', {}, OVERVIEW)).statusCode).toBe(303);

    const listed = async () =>
      (await gw.admin('GET', `/admin/v1/integrations/${HANDLE}/keys`)).json<{
        items: { id: string; kind: string; prefix: string; revoked_at: string | null }[];
      }>().items;
    const unseen = (await listed()).filter(
      (k) => k.kind === 'test' && k.revoked_at === null && !shownKey.startsWith(k.prefix),
    );
    const run = await runRetention(
      gw.store,
      { usageDays: 90, answersDays: 90 },
      { idleMs: 30 * 60_000, maxMs: 12 * 3_600_000 },
    );
    // Every key issued in a session that ended unseen, this one among them (earlier tests' sessions are live).
    expect(run.keys_never_shown_revoked).toBeGreaterThanOrEqual(1);
    const after = await listed();
    const neverShown = unseen.filter((k) => after.find((a) => a.id === k.id)!.revoked_at !== null);
    expect(neverShown.length).toBeGreaterThanOrEqual(1);
    expect(after.find((k) => shownKey.startsWith(k.prefix) && k.kind === 'test')!.revoked_at).toBeNull();
    const audit = (await gw.admin('GET', `/admin/v1/integrations/${HANDLE}/audit`)).json<{
      items: { action: string; actor: string; reason: string | null; details: Record<string, unknown> | null }[];
    }>().items;
    expect(audit).toContainEqual(
      expect.objectContaining({
        action: 'key_revoked',
        actor: 'console',
        details: expect.objectContaining({ key_id: neverShown[0]!.id, never_shown: true }),
      }),
    );
    // A second run finds nothing more to revoke.
    expect(
      (await runRetention(gw.store, { usageDays: 90, answersDays: 90 }, { idleMs: 30 * 60_000, maxMs: 12 * 3_600_000 }))
        .keys_never_shown_revoked,
    ).toBe(0);
  });

  it('finding 7: keeps both keys of two issues sent at once in one session, for two integrations', async () => {
    const other = 'brightpath:website-form';
    const both = await Promise.all([
      team.post(`${PAGE}/keys/test`, {}, OVERVIEW),
      team.post(`/console/integrations/${other}/keys/test`, {}, OVERVIEW),
    ]);
    expect(both.map((r) => r.statusCode)).toEqual([303, 303]);
    for (const page of [PAGE, `/console/integrations/${other}`]) {
      const keys = [...(await team.get(page)).body.matchAll(/value="(lgtest_[^"]+)"/g)].map((m) => m[1]!);
      for (const key of keys) gw.secrets.add(key);
      expect(keys.length).toBeGreaterThanOrEqual(1);
    }
  });
});

describe('a one-time value sealed by the release before', () => {
  it('is read as one waiting key, so a key issued across an upgrade is still shown', () => {
    const old = { integration: 'int-1', issued: { secret: 'lgv1_old', prefix: 'lgv1_old', heading: 'The new v1 key' } };
    const sealed = seal('s'.repeat(32), 'session-1', old as unknown as Flash);
    expect(unseal('s'.repeat(32), 'session-1', sealed)).toEqual({
      keys: [{ integration: 'int-1', keyId: '', secret: 'lgv1_old', prefix: 'lgv1_old', heading: 'The new v1 key' }],
    });
    expect(unseal('s'.repeat(32), 'session-2', sealed)).toBeNull();
  });
});
