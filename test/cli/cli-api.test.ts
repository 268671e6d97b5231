// The CLI in API mode (--url): a child process driving a real gateway process over its admin API, with
// the same output as in database mode on the same state, and one line with an exit code when it cannot.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtCli, CHILD_ADMIN_TOKEN, type ChildGateway, ROOT, spawnGateway } from '../support/child-gateway.js';
import { runOwned } from '../support/owned.js';

let gateway: ChildGateway;
let dir: string;
let database: string;
const servers: Server[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'lead-gateway-cli-api-'));
  database = join(dir, 'gateway.db');
  gateway = await spawnGateway({ env: { DATABASE_PATH: database } });
});
afterAll(async () => {
  await gateway?.stop();
  for (const server of servers) {
    server.closeAllConnections();
    server.close();
  }
  rmSync(dir, { recursive: true, force: true });
});

interface Run {
  code: number;
  out: string;
  err: string;
}

/** The CLI as a child process, with exactly the environment given (nothing of this process's own). */
async function cli(env: Record<string, string>, ...args: string[]): Promise<Run> {
  const run = await runOwned(process.execPath, [builtCli(), ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, ...env },
    timeoutMs: 30_000,
  });
  return { code: run.code ?? -1, out: run.stdout, err: run.stderr };
}

/** The CLI on the gateway's database file, as on the host that holds it. */
const onDatabase = (...args: string[]) => cli({ DATABASE_PATH: database, RULES_DIR: join(ROOT, 'rules') }, ...args);
/** The CLI on the running gateway, with the shared admin token in the environment. */
const overApi = (...args: string[]) => cli({ ADMIN_TOKEN: CHILD_ADMIN_TOKEN }, '--url', gateway.address, ...args);

const lines = (text: string) => text.trim().split('\n');
const json = (run: Run) => JSON.parse(run.out) as Record<string, unknown>;
/** The report is dated when it is made; everything else in it is the state. */
const undated = (report: Record<string, unknown>) => ({ ...report, generated_at: 'dated' });

/** A local server standing in for a gateway that is broken in a given way. */
async function stub(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

// Each command is a child process (up to a second or two on busy cores): a test of several outlasts the default 20 s.
describe('the CLI over the admin API (--url)', { timeout: 90_000 }, () => {
  it(
    'drives a migration through the gateway, printing what database mode prints for the same state',
    { timeout: 120_000 },
    async () => {
      const handle = 'brightpath:telegram-bot';
      const reads = [['integrations'], ['keys', handle], ['audit'], ['audit', handle], ['report', handle]];
      // Each read in both modes (side by side, two processes at a time): --json always, tables when asked.
      const same = async (tables = false) => {
        for (const args of reads.flatMap((read) => (tables ? [['--json', ...read], read] : [['--json', ...read]]))) {
          const [api, db] = await Promise.all([overApi(...args), onDatabase(...args)]);
          expect(api.code, `${args.join(' ')}: ${api.err}`).toBe(0);
          if (args[0] !== '--json') expect(api.out, args.join(' ')).toBe(db.out);
          else if (args[1] === 'report') expect(undated(json(api)), args.join(' ')).toEqual(undated(json(db)));
          else expect(json(api), args.join(' ')).toEqual(json(db));
        }
      };

      const listed = await overApi('integrations');
      expect(listed.code).toBe(0);
      expect(listed.out).toMatch(/^brightpath:telegram-bot\s+legacy\s+Admissions Telegram bot/m);
      expect(lines(listed.err)).toEqual([`gateway: ${gateway.address}`]);

      const issued = await overApi('--json', 'issue-key', handle, '--reason', 'migration starts');
      expect(issued.code).toBe(0);
      expect(json(issued)).toMatchObject({
        kind: 'v1',
        state: 'migrating',
        key: expect.stringMatching(/^lgv1_/),
        linked_leads: 0,
        unlinked_leads: [],
      });

      const renewed = await overApi('renew', handle, '--reason', 'key leaked');
      expect(renewed.code).toBe(0);
      expect(renewed.out).toMatch(
        /^Revoked 1 key\(s\)\. New v1 key for brightpath:telegram-bot \(shown once\):\n {2}lgv1_\S+$/m,
      );

      const switched = await overApi('--json', 'switch-off', handle, '--reason', 'owner confirmed', '--force');
      expect(switched.code).toBe(0);
      expect(json(switched)).toMatchObject({ handle, state: 'switched_off' });
      await same();

      expect((await overApi('rollback', handle, '--reason', 'bot not ready')).out).toBe(
        `${handle} is now migrating.\n`,
      );
      const report = await overApi('report', handle);
      expect(report.out).toMatch(/^brightpath:telegram-bot \(Admissions Telegram bot\): migrating$/m);
      await same(true);

      const audit = await overApi('audit', handle);
      expect(audit.out).toMatch(/rolled_back\s+switched_off -> migrating\s+automation\s+bot not ready/);
      expect(audit.out).toMatch(/switched_off_forced\s+migrating -> switched_off\s+automation\s+owner confirmed/);
    },
  );

  it("audits each change under the admin credential's operator; LEAD_GATEWAY_ADMIN_TOKEN outranks ADMIN_TOKEN", async () => {
    const created = await onDatabase('--json', 'admin-token', 'create', 'dilnoza');
    expect(created.code).toBe(0);
    const { token } = json(created) as { token: string };
    const asDilnoza = {
      LEAD_GATEWAY_URL: gateway.address,
      LEAD_GATEWAY_ADMIN_TOKEN: token,
      ADMIN_TOKEN: CHILD_ADMIN_TOKEN,
    };
    const handle = 'smile-dental:booking-form';
    expect((await cli(asDilnoza, 'issue-key', handle, '--reason', 'clinic starts')).code).toBe(0);
    const audit = json(await cli(asDilnoza, '--json', 'audit', handle)) as {
      items: { action: string; actor: string; reason: string }[];
    };
    expect(audit.items[0]).toMatchObject({ action: 'v1_key_issued', actor: 'dilnoza', reason: 'clinic starts' });
  });

  it('refuses as database mode refuses: exit 1 (refused) or 2 (usage) and the same one line', async () => {
    for (const [args, code, line] of [
      [['issue-key', 'brightpath:nope'], 1, /^error: No integration "brightpath:nope"/],
      [
        ['rollback', 'smile-dental:booking-form', '--reason', 'x'],
        1,
        /^error: .*only a switched-off integration can be rolled back/,
      ],
      // The admin API's bounds, checked before either target is asked.
      [
        ['audit', '--limit', '5000'],
        2,
        /^error: option '--limit <n>' argument '5000' is invalid\. Too big: expected number to be <=1000$/,
      ],
      [
        ['revoke-key', 'brightpath:telegram-bot', 'abc'],
        2,
        /^error: command-argument value 'abc' is invalid for argument 'key-id'\. Invalid UUID$/,
      ],
    ] as const) {
      const [api, db] = await Promise.all([overApi(...args), onDatabase(...args)]);
      expect([api.code, db.code], api.err).toEqual([code, code]);
      const apiLines = lines(api.err).filter((l) => !l.startsWith('(run with --help'));
      expect(apiLines).toEqual([
        lines(db.err)
          .filter((l) => !l.startsWith('(run with --help'))
          .at(-1),
      ]);
      expect(apiLines[0]).toMatch(line);
    }
  });

  it('takes the token from the environment only, and says which variable is wrong: exit 3, one line', async () => {
    const wrong = await cli(
      { LEAD_GATEWAY_ADMIN_TOKEN: 'not-the-token-0123456789abcdefghij' },
      '--url',
      gateway.address,
      'integrations',
    );
    expect(wrong.code).toBe(3);
    expect(lines(wrong.err)).toEqual([
      `error: ${gateway.address} refused the admin token from LEAD_GATEWAY_ADMIN_TOKEN (401): set LEAD_GATEWAY_ADMIN_TOKEN (or ADMIN_TOKEN) to a valid admin token`,
    ]);
    expect(wrong.out).toBe('');

    const none = await cli({}, '--url', gateway.address, 'integrations');
    expect(none.code).toBe(3);
    expect(lines(none.err)).toEqual([
      expect.stringMatching(
        /^error: no admin token: set LEAD_GATEWAY_ADMIN_TOKEN \(or ADMIN_TOKEN\) in the environment/,
      ),
    ]);

    const help = await cli({}, '--help');
    expect(help.out).toMatch(
      /LEAD_GATEWAY_ADMIN_TOKEN \(or else ADMIN_TOKEN\), never from an argument: an\s+argument shows in `ps`/,
    );
  });

  it('names a gateway it cannot reach, one that answers 5xx, one that does not answer in time, and a URL that is no gateway: exit 3, one line', async () => {
    const closed = await stub(() => {});
    servers.pop()!.close();
    const unreachable = await overApiAt(closed, 'integrations');
    expect(unreachable.code).toBe(3);
    expect(lines(unreachable.err)).toEqual([`error: ${closed}: cannot reach the gateway (ECONNREFUSED)`]);

    const unavailable = await stub((_req, res) => {
      res.writeHead(503, { 'content-type': 'application/problem+json', 'retry-after': '1' });
      res.end(JSON.stringify({ status: 503, code: 'service-unavailable', detail: 'The database is unavailable.' }));
    });
    const down = await overApiAt(unavailable, 'switch-off', 'brightpath:telegram-bot', '--reason', 'x');
    expect(down.code).toBe(3);
    expect(lines(down.err)).toEqual([
      `error: ${unavailable}: the gateway answered 503: The database is unavailable. (retry after 1 s); the change may or may not have been made: check with \`audit\``,
    ]);

    const silent = await stub(() => {}); // accepts, never answers
    const slow = await overApiAt(silent, '--timeout', '0.5', 'integrations');
    expect(slow.code).toBe(3);
    expect(lines(slow.err)).toEqual([`error: ${silent}: no answer within 0.5 s`]);

    const other = await stub((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<h1>Not here</h1>');
    });
    const wrongUrl = await overApiAt(other, 'integrations');
    expect(wrongUrl.code).toBe(3);
    expect(lines(wrongUrl.err)).toEqual([
      `error: ${other}/admin/v1/integrations answered 404 (text/html), not the admin API: is ${other} the gateway's base URL?`,
    ]);
  });

  it('refuses two targets, and the commands the admin API does not offer, with exit 2 and one line', async () => {
    for (const option of ['--database', '--database-url']) {
      const both = await overApi(option, option === '--database' ? database : 'postgres://localhost/x', 'integrations');
      expect(both.code).toBe(2);
      expect(lines(both.err)).toEqual([
        'error: --url names a gateway and --database/--database-url a database: give one',
      ]);
    }
    const migrate = await overApi('migrate');
    expect(migrate.code).toBe(2);
    expect(lines(migrate.err)).toEqual([
      'error: migrate works on the database only (--database or --database-url, not --url): a running gateway brought its schema up to date when it started',
    ]);
    const tokens = await overApi('admin-token', 'create', 'someone');
    expect(tokens.code).toBe(2);
    expect(lines(tokens.err)).toEqual([
      expect.stringMatching(
        /^error: admin-token works on the database only .*an admin token cannot mint or revoke admin tokens$/,
      ),
    ]);
    const credentials = await cli(
      { ADMIN_TOKEN: CHILD_ADMIN_TOKEN },
      '--url',
      'http://operator:secret@127.0.0.1:1',
      'integrations',
    );
    expect(credentials.code).toBe(2);
    expect(lines(credentials.err)).toEqual([
      'error: --url / LEAD_GATEWAY_URL: a URL carries no credentials; the admin token comes from LEAD_GATEWAY_ADMIN_TOKEN',
    ]);
  });

  it('goes to the database when the command line names one, even with LEAD_GATEWAY_URL set', async () => {
    const run = await cli(
      { LEAD_GATEWAY_URL: 'http://127.0.0.1:1', RULES_DIR: join(ROOT, 'rules') },
      '--database',
      database,
      'integrations',
    );
    expect(run.code).toBe(0);
    expect(lines(run.err)).toEqual([`database: ${database}`]);
  });
});

const overApiAt = (url: string, ...args: string[]) => cli({ ADMIN_TOKEN: CHILD_ADMIN_TOKEN }, '--url', url, ...args);
