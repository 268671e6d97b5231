// Sign-in per person: passwords checked against scrypt hashes, sessions in the database that sign-out
// ends, cookies a browser keeps only over HTTPS, CSRF tokens on every form, strict security headers.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../helper.js';
import { addUser, consoleClient, csrfTokenOf, PASSWORD } from '../support/console.js';
import { disableConsoleUser } from '../../src/console/users.js';
import { createAdminCredential, revokeAdminCredentials } from '../../src/admin/credentials.js';
import { ADMIN_TOKEN } from '../helper.js';
import { KNOWN_DEVICE_MAX_AGE_S } from '../../src/console/known-device.js';

let gw: Gateway;
beforeAll(async () => {
  gw = await startGateway({ console: {}, trustProxy: ['127.0.0.1'] });
  await addUser(gw, 'dilnoza');
  await addUser(gw, 'temur');
});
afterAll(() => gw.close());

const https = (remoteAddress?: string) =>
  consoleClient(gw.app, { https: true, gw, ...(remoteAddress ? { remoteAddress } : {}) });

describe('console sign-in', () => {
  it('refuses a wrong password with 401 and the form again; the right one lands on the overview', async () => {
    const browser = https();
    const wrong = await browser.signIn('dilnoza', 'not the password at all');
    expect(wrong.statusCode).toBe(401);
    expect(wrong.body).toContain('Wrong name or password');
    expect(browser.cookies.has('__Host-lg_console')).toBe(false);
    const unknown = await browser.signIn('nobody-here', PASSWORD);
    expect(unknown.statusCode).toBe(401);

    const right = await browser.signIn('dilnoza');
    expect(right.statusCode).toBe(303);
    expect(right.headers.location).toBe('/console/integrations');
    const overview = await browser.get('/console/integrations');
    expect(overview.statusCode).toBe(200);
    expect(overview.body).toContain('Signed in as <strong data-testid="viewer">dilnoza</strong> (service team)');
  });

  it('sends the session cookie __Host-, Secure, HttpOnly, SameSite=Lax, Path=/, without Domain or lifetime', async () => {
    const right = await https().signIn('dilnoza');
    const cookie = right.cookies.find((c) => c.name === '__Host-lg_console')!;
    expect(cookie).toMatchObject({ secure: true, httpOnly: true, sameSite: 'Lax', path: '/' });
    expect(cookie.domain).toBeUndefined();
    // A session cookie: gone when the browser closes; the database ends the session before that.
    expect(cookie.maxAge).toBeUndefined();
    expect(cookie.expires).toBeUndefined();
    const csrf =
      right.cookies.find((c) => c.name === '__Host-lg_csrf') ??
      (await https().get('/console/sign-in')).cookies.find((c) => c.name === '__Host-lg_csrf')!;
    expect(csrf).toMatchObject({ secure: true, httpOnly: true, sameSite: 'Strict', path: '/' });
  });

  it('stores only a hash of the session id, and one row per signed-in session', async () => {
    const browser = https();
    await browser.signIn('temur');
    const id = browser.cookies.get('__Host-lg_console')!.split('.')[0]!;
    expect(await gw.store.snapshot((r) => r.consoleSessions.find(id))).toBeNull();
    const hashed = await gw.store.snapshot((r) =>
      r.consoleSessions.find(createHash('sha256').update(id).digest('hex')),
    );
    expect(hashed).toMatchObject({ userName: 'temur' });
    // close() also searches the database and the log for the raw id (consoleClient adds it to the secrets).
  });

  it('refuses a form posted without its CSRF token, or with a token of another browser, with 403', async () => {
    const none = await https().post('/console/sign-in', { name: 'dilnoza', password: PASSWORD }, null);
    expect(none.statusCode).toBe(403);
    expect(none.body).toContain('without its security token');
    const browser = https();
    await browser.signIn('dilnoza');
    const other = https();
    const foreign = (await other.get('/console/sign-in')).body.match(/name="_csrf" value="([^"]+)"/)![1]!;
    const res = await gw.app.inject({
      method: 'POST',
      url: '/console/sign-out',
      headers: { 'x-forwarded-proto': 'https', 'content-type': 'application/x-www-form-urlencoded' },
      cookies: Object.fromEntries(browser.cookies),
      payload: `_csrf=${encodeURIComponent(foreign)}`,
    });
    expect(res.statusCode).toBe(403);
    expect((await browser.get('/console/integrations')).statusCode).toBe(200);
  });

  it('renews the CSRF secret at sign-in: a token from the page before sign-in is refused after it', async () => {
    const browser = https();
    const before = csrfTokenOf((await browser.get('/console/sign-in')).body)!;
    const secretBefore = browser.cookies.get('__Host-lg_csrf');
    await browser.signIn('dilnoza');
    expect(browser.cookies.get('__Host-lg_csrf')).not.toBe(secretBefore);
    const send = (token: string) =>
      gw.app.inject({
        method: 'POST',
        url: '/console/sign-out',
        headers: { 'x-forwarded-proto': 'https', 'content-type': 'application/x-www-form-urlencoded' },
        cookies: Object.fromEntries(browser.cookies),
        payload: `_csrf=${encodeURIComponent(token)}`,
      });
    expect((await send(before)).statusCode).toBe(403);
    expect((await browser.get('/console/integrations')).statusCode).toBe(200);
    // The page after sign-in carries a token of the new secret, and that one works.
    const after = csrfTokenOf((await browser.get('/console/integrations')).body)!;
    expect((await send(after)).statusCode).toBe(303);
  });

  it('ends the session at sign-out: the old cookie no longer opens a page', async () => {
    const browser = https();
    await browser.signIn('dilnoza');
    const kept = new Map(browser.cookies);
    const out = await browser.post('/console/sign-out', {}, '/console/integrations');
    expect(out.statusCode).toBe(303);
    expect(out.headers.location).toBe('/console/sign-in');
    const replay = await gw.app.inject({
      url: '/console/integrations',
      headers: { 'x-forwarded-proto': 'https' },
      cookies: Object.fromEntries(kept),
    });
    expect(replay.statusCode).toBe(303);
    expect(replay.headers.location).toBe('/console/sign-in');
  });

  it('clears the session cookie at sign-out with a Set-Cookie a browser takes: Secure, as a __Host- cookie must be', async () => {
    // Regression: the clearing cookie had no Secure, so a browser ignored it and kept the old cookie.
    const browser = https();
    await browser.signIn('dilnoza');
    const out = await browser.post('/console/sign-out', {}, '/console/integrations');
    const cleared = out.cookies.find((c) => c.name === '__Host-lg_console')!;
    expect(cleared).toMatchObject({ value: '', path: '/', secure: true, httpOnly: true, sameSite: 'Lax' });
    expect(cleared.domain).toBeUndefined();
  });

  it('ends every session of a disabled user at once, and refuses their password', async () => {
    await addUser(gw, 'leaver');
    const browser = https();
    await browser.signIn('leaver');
    expect((await browser.get('/console/integrations')).statusCode).toBe(200);
    expect(await disableConsoleUser(gw.store, 'leaver')).toEqual({ sessionsEnded: 1 });
    expect((await browser.get('/console/integrations')).statusCode).toBe(303);
    expect((await https().signIn('leaver')).statusCode).toBe(401);
  });

  it('sends a strict CSP and pages without inline script or style', async () => {
    const page = await https().get('/console/sign-in');
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(page.headers['strict-transport-security']).toBeDefined();
    expect(page.headers['cache-control']).toBe('no-store');
    // The one script is a file of the gateway's own; nothing inline.
    expect([...page.body.matchAll(/<script[^>]*>/gi)].map((m) => m[0])).toEqual([
      '<script src="/console/static/console.js" defer>',
    ]);
    expect(page.body).not.toMatch(/<script[^>]*>[^<]|\sstyle=|\son[a-z]+=/i);
    const js = await https().get('/console/static/console.js');
    expect(js.statusCode).toBe(200);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    const css = await https().get('/console/static/console.css');
    expect(css.statusCode).toBe(200);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
  });

  it('says to use HTTPS when the console with Secure cookies is opened over plain http', async () => {
    const plain = await consoleClient(gw.app).get('/console/sign-in');
    expect(plain.statusCode).toBe(403);
    expect(plain.body).toContain('open it over HTTPS');
    expect(plain.cookies).toEqual([]);
  });

  it('refuses a name no user can have without a look-up or an error: a 10,000-character name is a 401', async () => {
    const res = await https('10.9.1.1').signIn('x'.repeat(10_000));
    expect(res.statusCode).toBe(401);
  });

  it('sends a page asked for without a session to the sign-in form', async () => {
    const res = await https().get('/console/integrations');
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/console/sign-in');
  });
});

describe('console sign-in with a personal admin token', () => {
  it('signs the operator in as the service team; revoking the token ends the session', async () => {
    const { token } = await createAdminCredential(gw.store, 'operator', 'test');
    gw.secrets.add(token);
    const browser = https();
    const res = await browser.post('/console/sign-in/token', { token }, '/console/sign-in');
    expect(res.statusCode).toBe(303);
    expect((await browser.get('/console/integrations')).body).toContain(
      'Signed in as <strong data-testid="viewer">operator</strong> (service team)',
    );
    await revokeAdminCredentials(gw.store, 'operator');
    expect((await browser.get('/console/integrations')).statusCode).toBe(303);
    expect((await https().post('/console/sign-in/token', { token }, '/console/sign-in')).statusCode).toBe(401);
  });

  it('refuses the shared ADMIN_TOKEN (it names no person) and a token that is no token', async () => {
    expect((await https().post('/console/sign-in/token', { token: ADMIN_TOKEN }, '/console/sign-in')).statusCode).toBe(
      401,
    );
    expect(
      (await https().post('/console/sign-in/token', { token: 'lgadm_not-a-live-token' }, '/console/sign-in'))
        .statusCode,
    ).toBe(401);
  });
});

describe('console sign-in attempts', () => {
  it('throttles one name after 5 failures a minute from unknown browsers, at any address, even with the right password', async () => {
    await addUser(gw, 'target');
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++)
      statuses.push((await https(`10.9.0.${i + 1}`).signIn('target', `guess number ${i}`)).statusCode);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
    const right = await https('10.9.0.99').signIn('target');
    expect(right.statusCode).toBe(429);
    expect(right.headers['retry-after']).toMatch(/^\d+$/);
    // Another name is unaffected.
    expect((await https('10.9.0.99').signIn('temur')).statusCode).toBe(303);
  });

  it('lets the real person in from a browser that signed in as that name before, whatever six other addresses guessed', async () => {
    await addUser(gw, 'owner');
    const own = https('10.9.5.1');
    expect((await own.signIn('owner')).statusCode).toBe(303);
    const known = own.cookies.get('__Host-lg_known')!;
    await own.post('/console/sign-out', {}, '/console/integrations');
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++)
      statuses.push((await https(`10.9.5.${i + 10}`).signIn('owner', `guess number ${i}`)).statusCode);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
    // The known browser, from its usual address and from a new one, signs in; a stranger is still throttled.
    expect((await own.signIn('owner')).statusCode).toBe(303);
    const travelling = https('10.9.5.99');
    travelling.cookies.set('__Host-lg_known', known);
    expect((await travelling.signIn('owner')).statusCode).toBe(303);
    expect((await https('10.9.5.99').signIn('owner')).statusCode).toBe(429);
    // A cookie known for another name, or made up, is no way around the name's budget.
    for (const forged of ['A'.repeat(43), (await cookieFor('temur')).get('__Host-lg_known')!]) {
      const stranger = https('10.9.5.98');
      stranger.cookies.set('__Host-lg_known', forged);
      expect((await stranger.signIn('owner')).statusCode).toBe(429);
    }
  });

  it('gives the known browsers of a name a budget of 5 failures of their own', async () => {
    await addUser(gw, 'careless');
    const own = https('10.9.6.1');
    expect((await own.signIn('careless')).statusCode).toBe(303);
    await own.post('/console/sign-out', {}, '/console/integrations');
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await own.signIn('careless', `typo number ${i}`)).statusCode);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
    // Unknown browsers' budget for the name is untouched by them.
    expect((await https('10.9.6.2').signIn('careless')).statusCode).toBe(303);
  });

  it('sends the known-device cookie __Host-, Secure, HttpOnly, SameSite=Strict, Path=/, for 90 days, holding no name', async () => {
    const res = await https('10.9.7.1').signIn('temur');
    const cookie = res.cookies.find((c) => c.name === '__Host-lg_known')!;
    expect(cookie).toMatchObject({
      secure: true,
      httpOnly: true,
      sameSite: 'Strict',
      path: '/',
      maxAge: KNOWN_DEVICE_MAX_AGE_S,
    });
    expect(cookie.domain).toBeUndefined();
    expect(cookie.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(cookie.value).not.toContain('temur');
  });
});

/** The cookies of a browser that signed in as `name`. */
async function cookieFor(name: string): Promise<Map<string, string>> {
  const browser = https('10.9.8.1');
  expect((await browser.signIn(name)).statusCode).toBe(303);
  return browser.cookies;
}

describe('console sign-in attempts sent at once', () => {
  // Regression: the budgets were only looked at before the slow password check and counted after it,
  // so guesses sent together all passed the look before the first failure was counted.
  const post = async (target: Gateway, name: string, password: string, address: string) => {
    const page = await target.app.inject({
      url: '/console/sign-in',
      headers: { 'x-forwarded-proto': 'https', 'x-forwarded-for': address },
    });
    const token = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
    const csrf = page.cookies.find((c) => c.name === '__Host-lg_csrf')!;
    return () =>
      target.app.inject({
        method: 'POST',
        url: '/console/sign-in',
        headers: {
          'x-forwarded-proto': 'https',
          'x-forwarded-for': address,
          'content-type': 'application/x-www-form-urlencoded',
        },
        cookies: { [csrf.name]: csrf.value },
        payload: new URLSearchParams({ _csrf: token, name, password }).toString(),
      });
  };

  it('checks at most 5 passwords of one name however many guesses arrive together', async () => {
    await addUser(gw, 'together');
    const sends = await Promise.all(
      Array.from({ length: 9 }, (_, i) => post(gw, 'together', `parallel guess ${i}`, `10.9.2.${i + 1}`)),
    );
    const statuses = (await Promise.all(sends.map((send) => send()))).map((r) => r.statusCode).sort();
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429, 429]);
  });

  it('checks at most AUTH_FAILURES_PER_MINUTE passwords from one address however many arrive together', async () => {
    const limited = await startGateway({ console: {}, trustProxy: ['127.0.0.1'], authFailuresPerMinute: 3 });
    try {
      for (const name of ['first', 'second', 'third', 'fourth', 'fifth', 'sixth']) await addUser(limited, name);
      const sends = await Promise.all(
        ['first', 'second', 'third', 'fourth', 'fifth', 'sixth'].map((name) =>
          post(limited, name, 'a wrong password here', '10.9.3.1'),
        ),
      );
      const statuses = (await Promise.all(sends.map((send) => send()))).map((r) => r.statusCode).sort();
      expect(statuses).toEqual([401, 401, 401, 429, 429, 429]);
    } finally {
      await limited.close();
    }
  });

  it('counts a successful sign-in in neither budget', async () => {
    await addUser(gw, 'regular');
    for (let i = 0; i < 7; i++) expect((await https('10.9.4.1').signIn('regular')).statusCode).toBe(303);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++)
      statuses.push((await https('10.9.4.1').signIn('regular', `guess number ${i}`)).statusCode);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
  });
});
