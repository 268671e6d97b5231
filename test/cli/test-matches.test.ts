// `lead-gateway test-matches` as a child process (finding 1 of the test-mode review): the live persons a
// test key's calls found, on the database a gateway serves from and over its admin API, the same rows.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../helper.js';
import { cliOn } from '../support/cli.js';

let gw: Gateway;
let base: string;
let cli: ReturnType<typeof cliOn>;
const HANDLE = 'brightpath:telegram-bot';

beforeAll(async () => {
  gw = await startGateway();
  base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
  cli = cliOn(gw);
});
afterAll(() => gw.close());

describe('lead-gateway test-matches', { timeout: 90_000 }, () => {
  it('prints which test key found which person and when, the same on the database and over the admin API', async () => {
    expect((await cli('test-matches', HANDLE)).out).toContain('no test call found a live person');
    const website = await gw.issueKey('brightpath:website-form');
    const created = (
      await gw.submit(website, { event_id: 'w-1', first_name: 'Zarina', phone: '+998 97 111-22-33' })
    ).json<{ contact_id: string }>();
    const test = (await gw.admin('POST', `/admin/v1/integrations/${HANDLE}/keys/test`)).json<{
      id: string;
      key: string;
      prefix: string;
    }>();
    expect(
      (await gw.submit(test.key, { event_id: 'probe-1', first_name: 'Guess', phone: '+998 97 111-22-33' })).statusCode,
    ).toBe(200);

    const onDatabase = await cli('--json', 'test-matches', HANDLE);
    expect(onDatabase.code).toBe(0);
    const page = JSON.parse(onDatabase.out);
    expect(page.items).toEqual([
      expect.objectContaining({
        key_id: test.id,
        key_prefix: test.prefix,
        contact_id: created.contact_id,
        own: false,
        matched_by: 'phone',
        last_event_id: 'probe-1',
        calls: 1,
      }),
    ]);
    expect(JSON.parse((await cli('--url', base, '--json', 'test-matches', HANDLE)).out)).toEqual(page);

    const human = await cli('test-matches', HANDLE);
    expect(human.out).toMatch(
      new RegExp(`^${test.prefix}\\s+${created.contact_id}\\s+\\S+\\s+other\\s+phone\\s+1\\s`, 'm'),
    );
    expect(human.out).toContain('1 row(s); at most 1000 per test key');
    expect((await cli('test-matches', HANDLE, '--limit', '0')).code).toBe(2);
  });
});
