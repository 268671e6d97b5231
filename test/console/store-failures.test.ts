// The console fails as the API does: a store that cannot answer is 503 with Retry-After (one wait of the
// statement timeout, not several), and a NUL or other control character in a form is refused before it
// reaches the store, on both engines.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../helper.js';
import { addUser, consoleClient, type ConsoleClient } from '../support/console.js';
import { databaseEnv, testEngine } from '../support/store.js';

let gw: Gateway;
let team: ConsoleClient;
const HANDLE = 'brightpath:telegram-bot';
const PAGE = `/console/integrations/${HANDLE}`;

beforeAll(async () => {
  gw = await startGateway({ console: { secureCookies: false }, statementTimeoutMs: 300 });
  await addUser(gw, 'dilnoza');
  team = consoleClient(gw.app, { gw });
  expect((await team.signIn('dilnoza')).statusCode).toBe(303);
});
afterAll(() => gw.close());

/** Holds an ACCESS EXCLUSIVE lock on `table` from a session of its own while `fn` runs. */
async function withTableLocked<T>(table: string, fn: () => Promise<T>): Promise<T> {
  const locker = new pg.Client({ connectionString: databaseEnv(gw.store).DATABASE_URL });
  await locker.connect();
  try {
    await locker.query('BEGIN');
    await locker.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
    return await fn();
  } finally {
    await locker.query('ROLLBACK');
    await locker.end();
  }
}

const audit = async () =>
  (await gw.admin('GET', `/admin/v1/integrations/${HANDLE}/audit`)).json<{
    items: { action: string; reason: string | null }[];
  }>().items;

/** The console's error page: its status, problem code and Retry-After. */
const failure = (res: { statusCode: number; headers: Record<string, unknown>; body: string }) => ({
  status: res.statusCode,
  type: String(res.headers['content-type']),
  code: /data-code="([^"]+)"/.exec(res.body)?.[1],
  retryAfter: res.headers['retry-after'],
});

describe.runIf(testEngine() === 'postgres')('a console page while a table is locked past the statement timeout', () => {
  // Each read of a signed-in page: the session (console_sessions, then the user), the page's own reads.
  for (const table of ['console_sessions', 'console_users', 'integration_states', 'leads']) {
    it(`answers 503 with Retry-After, as the API does, not 500 (${table})`, async () => {
      let failed = 0;
      for (const url of ['/console/integrations', PAGE, `${PAGE}/not-found`, '/console/leads?workspace=brightpath']) {
        const res = await withTableLocked(table, () => team.get(url));
        if (res.statusCode === 200) continue; // a page that does not read this table
        expect({ url, ...failure(res) }).toEqual({
          url,
          status: 503,
          type: 'text/html; charset=utf-8',
          code: 'service-unavailable',
          retryAfter: '1',
        });
        expect(res.body).toContain('nothing was changed');
        failed++;
      }
      expect(failed).toBeGreaterThan(0);
      // And the page is back once the lock is gone: the session survived.
      expect((await team.get(PAGE)).statusCode).toBe(200);
    });
  }
});

describe('a console action while the store takes no writes', () => {
  it('answers 503 with Retry-After and an HTML page, and nothing is kept (regression: 500)', async () => {
    const before = await audit();
    const csrfPage = await team.get(PAGE);
    expect(csrfPage.statusCode).toBe(200);
    await gw.inspect.refuseWrites(true);
    let res;
    try {
      res = await team.post(`${PAGE}/keys/issue`, { reason: 'while read-only' }, PAGE);
    } finally {
      await gw.inspect.refuseWrites(false);
    }
    expect(failure(res)).toEqual({
      status: 503,
      type: 'text/html; charset=utf-8',
      code: 'service-unavailable',
      retryAfter: '1',
    });
    expect(await audit()).toEqual(before);
  });
});

describe('a NUL in a console form or query', () => {
  it('is refused with 400 nul-character in every form, before the action runs: nothing is audited (regression: 500 on PostgreSQL)', async () => {
    const before = await audit();
    for (const [path, fields] of [
      ['switch-off', { reason: 'a\u0000b' }],
      ['rollback', { reason: 'a\u0000b' }],
      ['keys/import', { key: 'legacy-key-\u0000-0123', reason: 'x' }],
      ['keys/issue', { 're\u0000ason': 'x' }],
      ['keys/test', { reason: 'a\u0000b' }],
      ['ported', { note: 'a\u0000b' }],
      ['ported/clear', { confirm: 'yes', reason: 'a\u0000b' }],
    ] as const) {
      const res = await team.post(`${PAGE}/${path}`, fields, PAGE);
      expect({ path, ...failure(res) }).toEqual({
        path,
        status: 400,
        type: 'text/html; charset=utf-8',
        code: 'nul-character',
        retryAfter: undefined,
      });
    }
    expect((await team.post('/console/sign-in', { name: 'dilnoza', password: 'x\u0000y' })).statusCode).toBe(400);
    expect(await audit()).toEqual(before);
  });

  it('is refused in a query too, as the API refuses it', async () => {
    const res = await team.get('/console/leads?workspace=brightpath&fk=name&fv=a%00b');
    expect(failure(res)).toMatchObject({ status: 400, code: 'nul-character' });
  });
});

describe('control characters in a console reason', () => {
  it('a line break or an escape sequence is refused with 422 on the page, nothing audited; a plain reason passes', async () => {
    const before = await audit();
    for (const reason of ['fine\nforged row', 'red \u001b[31m text', 'c1 \u009b control']) {
      const res = await team.post(`${PAGE}/keys/issue`, { reason }, PAGE);
      expect(res.statusCode).toBe(422);
      expect(res.body).toContain('reason: must not hold control characters');
    }
    expect(await audit()).toEqual(before);
    const ok = await team.post(`${PAGE}/keys/issue`, { reason: 'plain words' }, PAGE);
    expect(ok.statusCode).toBe(303);
    const issued = /id="issued-key"[^>]*value="([^"]+)"/.exec(
      (await team.get(ok.headers.location as string)).body,
    )?.[1];
    if (issued) gw.secrets.add(issued);
    expect((await audit())[0]).toMatchObject({ action: 'v1_key_issued', reason: 'plain words' });
  });
});
