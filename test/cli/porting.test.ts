// `lead-gateway ported` and `not-found` as child processes: on the database a gateway serves from, and
// over that gateway's admin API (--url), the same objects printed either way.
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

describe('lead-gateway ported and not-found', { timeout: 90_000 }, () => {
  it('marks, refuses a second mark, prints the flag in the report, and clears it over the admin API', async () => {
    const marked = await cli('--json', 'ported', 'mark', HANDLE, '--note', 'owner says done');
    expect(marked.code).toBe(0);
    expect(JSON.parse(marked.out)).toEqual({
      ported_at: expect.any(String),
      ported_by: expect.stringMatching(/^cli:/),
      note: 'owner says done',
    });

    const again = await cli('ported', 'mark', HANDLE);
    expect(again.code).toBe(1);
    expect(again.err).toMatch(/was marked ported by cli:/);
    expect((await cli('ported', 'mark', HANDLE, '--note', 'a\nforged line')).code).toBe(2);

    const report = await cli('report', HANDLE);
    expect(report.out).toMatch(/^ported: marked by cli:\S+ at \S+: owner says done$/m);
    expect(report.out).toMatch(/^ {2}- marked ported by cli:\S+ at \S+: owner says done$/m);

    const cleared = await cli('--url', base, '--json', 'ported', 'clear', HANDLE, '--reason', 'asked by the owner');
    expect(cleared.code).toBe(0);
    expect(JSON.parse(cleared.out)).toEqual({ ported: null });
    expect((await cli('--url', base, 'ported', 'clear', HANDLE)).code).toBe(1);
    expect(
      (await gw.admin('GET', `/admin/v1/integrations/${HANDLE}/audit`))
        .json()
        .items.slice(0, 2)
        .map((e: { action: string }) => e.action),
    ).toEqual(['ported_cleared', 'marked_ported']);
  });

  it('lists the answers 404s page by page, the same on the database and over the admin API', async () => {
    const key = await gw.issueKey(HANDLE);
    for (const id of ['telegram:1', 'telegram:2', 'telegram:3']) {
      const res = await gw.app.inject({
        method: 'POST',
        url: '/api/integrations/v1/leads/answers/',
        headers: { authorization: `Bearer ${key}` },
        payload: { event_id: `cli-${id}`, external_contact_id: id, answers: { laptop: 'yes' } },
      });
      expect(res.statusCode).toBe(404);
    }
    // The gateway's own counts reach the database with its flush; the admin API's answer flushes them first.
    const first = (await gw.admin('GET', `/admin/v1/integrations/${HANDLE}/not-found?limit=2`)).json();
    const printed = await cli('--json', 'not-found', HANDLE, '--limit', '2');
    expect(printed.code).toBe(0);
    expect(JSON.parse(printed.out)).toEqual(first);
    expect(JSON.parse((await cli('--url', base, '--json', 'not-found', HANDLE, '--limit', '2')).out)).toEqual(first);

    const human = await cli('not-found', HANDLE, '--limit', '2');
    expect(human.out).toMatch(/^EXTERNAL_CONTACT_ID\s+CALLS\s+FIRST\s+LAST\s+UNLINKED LEGACY LEAD$/m);
    expect(human.out).toMatch(/^3 id\(s\), 3 call\(s\) in all$/m);
    expect(human.out).toContain(`more: --after ${first.next}`);
    const rest = JSON.parse((await cli('--json', 'not-found', HANDLE, '--limit', '2', '--after', first.next)).out);
    expect(rest.items).toHaveLength(1);
    expect(rest.next).toBeNull();
    expect((await cli('report', HANDLE)).out).toMatch(
      /^answers 404s: 3 id\(s\), 3 call\(s\), latest: telegram:\d, telegram:\d, telegram:\d$/m,
    );
  });
});
