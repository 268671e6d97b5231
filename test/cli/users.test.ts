// `lead-gateway users`: console users made on the gateway's database, the password from stdin or the
// environment (never an argument), stored only as a scrypt hash.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_RULES, startGateway, type Gateway } from '../helper.js';
import { addUser, consoleClient } from '../support/console.js';
import { newId } from '../../src/store/ids.js';
import { builtCli, spawnGateway } from '../support/child-gateway.js';

let gw: Gateway;
const ROOT = join(import.meta.dirname, '..', '..');
const PASSWORD = 'a long console passphrase';

beforeAll(async () => {
  gw = await startGateway({ console: { secureCookies: false } });
  gw.secrets.add(PASSWORD);
});
afterAll(() => gw.close());

function cli(args: string[], options: { input?: string; env?: Record<string, string> } = {}) {
  const run = spawnSync(process.execPath, [builtCli(), ...args], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_PATH: join(gw.dir, 'gateway.db'), RULES_DIR: EXAMPLE_RULES, ...options.env },
    input: options.input ?? '',
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { code: run.status, out: run.stdout, err: run.stderr };
}

// Each command is a child process (up to a second or two on busy cores): a test of several outlasts the default 20 s.
describe('lead-gateway users', { timeout: 90_000 }, () => {
  it('adds a service-team user with the password on stdin; they sign in to the console', async () => {
    const added = cli(['users', 'add', 'aziza', '--service-team'], { input: `${PASSWORD}\n` });
    expect(added.err).not.toContain('error');
    expect(added.code).toBe(0);
    expect(added.out).toContain('Console user aziza added (service team)');
    const browser = consoleClient(gw.app, { gw });
    expect((await browser.signIn('aziza', PASSWORD)).statusCode).toBe(303);
    const stored = await gw.store.snapshot((r) => r.consoleUsers.findByName('aziza'));
    expect(stored!.passwordHash).toMatch(/^scrypt\$32768\$8\$3\$[\w-]{22}\$[\w-]{43}$/);
  });

  it('adds a workspace owner with the password from LEAD_GATEWAY_CONSOLE_PASSWORD; lists; disables', async () => {
    const added = cli(['--json', 'users', 'add', 'smile-owner', '--workspace', 'smile-dental'], {
      env: { LEAD_GATEWAY_CONSOLE_PASSWORD: PASSWORD },
    });
    expect(added.code).toBe(0);
    expect(JSON.parse(added.out)).toMatchObject({ name: 'smile-owner', workspace: 'smile-dental' });
    const listed = cli(['users', 'list']);
    expect(listed.out).toMatch(/^NAME\s+SEES\s+CREATED\s+BY\s+DISABLED$/m);
    expect(listed.out).toMatch(/^smile-owner\s+smile-dental\s/m);
    expect(listed.out).not.toContain('scrypt');
    const disabled = cli(['users', 'disable', 'smile-owner']);
    expect(disabled.code).toBe(0);
    expect((await consoleClient(gw.app, { gw }).signIn('smile-owner', PASSWORD)).statusCode).toBe(401);
    expect(cli(['users', 'disable', 'smile-owner']).code).toBe(1);
  });

  it('refuses what cannot be a user: no scope or both, an unknown workspace, a short password, a taken name', async () => {
    const input = `${PASSWORD}\n`;
    expect(cli(['users', 'add', 'nobody'], { input }).code).toBe(2);
    expect(cli(['users', 'add', 'nobody', '--service-team', '--workspace', 'smile-dental'], { input }).code).toBe(2);
    const unknown = cli(['users', 'add', 'nobody', '--workspace', 'no-such-place'], { input });
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain('No workspace "no-such-place"');
    expect(cli(['users', 'add', 'nobody', '--service-team'], { input: 'short\n' }).err).toContain(
      'at least 12 characters',
    );
    expect(cli(['users', 'add', 'automation', '--service-team'], { input }).code).toBe(1);
    await addUser(gw, 'taken');
    expect(cli(['users', 'add', 'taken', '--service-team'], { input }).err).toContain('exists already');
  });

  it('one name, one person: users add and admin-token create refuse each other, and check-names lists a collision with exit 1', async () => {
    const input = `${PASSWORD}\n`;
    const token = cli(['--json', 'admin-token', 'create', 'timur']);
    expect(token.code).toBe(0);
    gw.secrets.add((JSON.parse(token.out) as { token: string }).token);
    const user = cli(['users', 'add', 'timur', '--service-team'], { input });
    expect(user.code).toBe(1);
    expect(user.err).toContain('"timur" already names an admin token (live or revoked)');
    expect(cli(['users', 'add', 'malika', '--service-team'], { input }).code).toBe(0);
    const other = cli(['admin-token', 'create', 'malika']);
    expect(other.code).toBe(1);
    expect(other.err).toContain('"malika" already names a console user');
    expect(cli(['users', 'check-names'])).toMatchObject({ code: 0, out: expect.stringContaining('No name is shared') });
    // A collision made before the rule: a token row written straight into the store.
    await gw.store.transact((tx) =>
      tx.adminCredentials.insert({
        id: newId(),
        name: 'malika',
        prefix: 'lgadm_xx',
        hash: 'cd'.repeat(32),
        createdAt: new Date().toISOString(),
        createdBy: 'test',
        revokedAt: null,
      }),
    );
    const check = cli(['users', 'check-names']);
    expect(check.code).toBe(1);
    expect(check.out).toMatch(/^malika\s+console user, admin token$/m);
    expect(check.err).toContain('1 name(s) belong to more than one person');
    // And a gateway started on this database says so, until the collision is settled.
    const gateway = await spawnGateway({ env: { DATABASE_PATH: join(gw.dir, 'gateway.db') }, capture: true });
    try {
      expect(gateway.output()).toMatch(
        /"names":\["malika \(console user, admin token\)"\].*"msg":"names shared by more than one person in the audit log/,
      );
    } finally {
      await gateway.stop();
    }
  });
});
