// One name, one person: console users and admin tokens share the names the audit log gives, whichever
// is made first, and a check lists the names that collide already.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../helper.js';
import { addUser, PASSWORD } from '../support/console.js';
import { createAdminCredential, nameCollisions, revokeAdminCredentials } from '../../src/admin/credentials.js';
import { createConsoleUser } from '../../src/console/users.js';
import { disableConsoleUser } from '../../src/console/users.js';
import { newId } from '../../src/store/ids.js';
import { AppError } from '../../src/errors.js';

let gw: Gateway;
beforeAll(async () => {
  gw = await startGateway({ console: { secureCookies: false } });
});
afterAll(() => gw.close());

const issue = async (name: string) => {
  const issued = await createAdminCredential(gw.store, name, 'test');
  gw.secrets.add(issued.token);
  return issued;
};
const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => null,
    (error: unknown) => (error instanceof AppError ? { code: error.code, detail: error.message } : error),
  );

describe('one namespace for console users and admin tokens', () => {
  it('refuses an admin token named as a console user, a disabled one too', async () => {
    await addUser(gw, 'nodira');
    expect(await refusal(issue('nodira'))).toEqual({
      code: 'conflict',
      detail: expect.stringContaining('"nodira" already names a console user'),
    });
    await disableConsoleUser(gw.store, 'nodira');
    expect(await refusal(issue('nodira'))).toMatchObject({ code: 'conflict' });
    expect(await gw.store.snapshot((r) => r.adminCredentials.list())).not.toContainEqual(
      expect.objectContaining({ name: 'nodira' }),
    );
  });

  it('refuses a console user named as an admin token, a revoked one too; a second token of the same operator is fine', async () => {
    await issue('farrukh');
    await issue('farrukh');
    expect(await refusal(addUser(gw, 'farrukh'))).toEqual({
      code: 'conflict',
      detail: expect.stringContaining('"farrukh" already names an admin token (live or revoked)'),
    });
    await revokeAdminCredentials(gw.store, 'farrukh');
    expect(await refusal(addUser(gw, 'farrukh'))).toMatchObject({ code: 'conflict' });
    expect(await gw.store.snapshot((r) => r.consoleUsers.findByName('farrukh'))).toBeNull();
  });

  it("refuses the shared ADMIN_TOKEN's name to both", async () => {
    expect(await refusal(addUser(gw, 'automation'))).toMatchObject({ code: 'conflict' });
    expect(
      await refusal(
        createConsoleUser(gw.store, gw.rules.current(), {
          name: 'robot',
          password: PASSWORD,
          workspace: null,
          createdBy: 'test',
          sharedTokenName: 'robot',
        }),
      ),
    ).toMatchObject({ code: 'conflict' });
    expect(await refusal(createAdminCredential(gw.store, 'robot', 'test', 'robot'))).toMatchObject({
      code: 'conflict',
    });
  });

  it('one name made as both at the same moment: never both (test/store/repos/locks.test.ts shows the name lock making one wait)', async () => {
    for (let round = 0; round < 2; round++) {
      const name = `racer-${round}`;
      const results = await Promise.allSettled([addUser(gw, name), issue(name), addUser(gw, name), issue(name)]);
      const users = (await gw.store.snapshot((r) => r.consoleUsers.findByName(name))) === null ? 0 : 1;
      const tokens = (await gw.store.snapshot((r) => r.adminCredentials.list())).filter((c) => c.name === name).length;
      // Either one user (and every token refused) or the tokens (and every user refused).
      expect(users === 1 ? tokens : users).toBe(0);
      expect(
        results
          .filter((r) => r.status === 'rejected')
          .every((r) => (r as PromiseRejectedResult).reason instanceof AppError),
      ).toBe(true);
    }
  });
});

describe('the collision check', () => {
  it('lists a name held by a console user and an admin token, written around the rule', async () => {
    expect(await nameCollisions(gw.store)).toEqual([]);
    const at = new Date().toISOString();
    await gw.store.transact(async (tx) => {
      await tx.consoleUsers.insert({
        id: newId(),
        name: 'shared-name',
        passwordHash: 'scrypt$1$1$1$x$y',
        workspace: null,
        createdAt: at,
        createdBy: 'test',
        disabledAt: null,
      });
      await tx.adminCredentials.insert({
        id: newId(),
        name: 'shared-name',
        prefix: 'lgadm_xx',
        hash: 'ab'.repeat(32),
        createdAt: at,
        createdBy: 'test',
        revokedAt: null,
      });
      await tx.consoleUsers.insert({
        id: newId(),
        name: 'automation',
        passwordHash: 'scrypt$1$1$1$x$y',
        workspace: null,
        createdAt: at,
        createdBy: 'test',
        disabledAt: null,
      });
    });
    expect(await nameCollisions(gw.store)).toEqual([
      { name: 'automation', holders: ['shared ADMIN_TOKEN', 'console user'] },
      { name: 'shared-name', holders: ['console user', 'admin token'] },
    ]);
  });
});
