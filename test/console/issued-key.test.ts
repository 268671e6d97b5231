// The key an action issued is shown by the page its redirect leads to, and cleared from the session only
// once that page is rendered: a page that fails on the way (a store blip) leaves it for the session's
// next page, which shows it once; the page after shows none. On both engines.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../helper.js';
import { addUser, consoleClient, type ConsoleClient } from '../support/console.js';
import { testEngine } from '../support/store.js';

let gw: Gateway;
let team: ConsoleClient;
const HANDLE = 'brightpath:telegram-bot';
const PAGE = `/console/integrations/${HANDLE}`;

beforeAll(async () => {
  // A short statement timeout (PostgreSQL): a read behind a held lock fails soon.
  gw = await startGateway({ console: { secureCookies: false }, statementTimeoutMs: 300 });
  await addUser(gw, 'dilnoza');
  team = consoleClient(gw.app, { gw });
  expect((await team.signIn('dilnoza')).statusCode).toBe(303);
});
afterAll(() => gw.close());

const keyFrom = (html: string) => /id="issued-key"[^>]*value="([^"]+)"/.exec(html)?.[1];

/** Issues a key through the console's form (its CSRF token and the session), as a person does. */
async function issue(reason: string, confirm = false) {
  const res = await team.post(
    `${PAGE}/keys/${confirm ? 'renew' : 'issue'}`,
    { reason, ...(confirm ? { confirm: 'yes' } : {}) },
    PAGE,
  );
  expect(res.statusCode).toBe(303);
  expect(res.headers.location).toBe(`/console/integrations/${encodeURIComponent(HANDLE)}`);
}

/** The page that shows the key, once: the key is live, and the next page shows none. */
async function expectShownOnce(): Promise<string> {
  const shown = await team.get(PAGE);
  expect(shown.statusCode).toBe(200);
  const key = keyFrom(shown.body)!;
  expect(key).toMatch(/\S{20,}/);
  gw.secrets.add(key);
  const after = await team.get(PAGE);
  expect(after.statusCode).toBe(200);
  expect(after.body).not.toContain(key);
  expect(after.body).not.toContain('id="issued-key"');
  return key;
}

describe('the one-time key of the console', () => {
  it('finding 7: a page whose read fails while it is rendered leaves the key for the next page of the session, which shows it once', async () => {
    await issue('finding 7');
    // The page reads the integration's audit entries after the flash: that read fails.
    const failed = await gw.inspect.whileUnreadable('audit_log', () => team.get(PAGE));
    expect(failed.statusCode).toBe(testEngine() === 'postgres' ? 503 : 500);
    expect(failed.body).not.toContain('issued-key');
    const key = await expectShownOnce();
    expect((await gw.submit(key, { event_id: 'issued-key-1', first_name: 'Ali' })).statusCode).toBe(201);
  });

  it('a page that cannot clear the key answers 503 and leaves it for the next page', async () => {
    await issue('renewed while the store takes no writes', true);
    await gw.inspect.refuseWrites(true);
    let failed;
    try {
      failed = await team.get(PAGE);
    } finally {
      await gw.inspect.refuseWrites(false);
    }
    expect(failed.statusCode).toBe(503);
    expect(failed.body).not.toContain('issued-key');
    const key = await expectShownOnce();
    expect((await gw.submit(key, { event_id: 'issued-key-2', first_name: 'Ali' })).statusCode).toBe(201);
  });
});
