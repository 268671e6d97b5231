// `lead-gateway users ...`: the console's people, managed where the database is (like admin tokens).
import type { Command } from 'commander';
import { createConsoleUser, disableConsoleUser } from '../console/users.js';
import { listOf } from '../admin/views.js';
import { nameCollisions } from '../admin/credentials.js';
import { AppError } from '../errors.js';
import { table } from './table.js';
import { UsageError } from './exit.js';
import type { Context } from './database-backend.js';
import { readSecret } from './secret-input.js';

/** Where a new user's password comes from when stdin is not a pipe: never from an argument (ps, shell history). */
export const PASSWORD_ENV = 'LEAD_GATEWAY_CONSOLE_PASSWORD';

interface UserCommandDeps {
  env: Record<string, string | undefined>;
  actor: string;
  print(human: string, data: unknown): void;
  onDatabase(command: string, why: string, fn: (ctx: Context) => Promise<void>): Promise<void>;
}

export function registerUserCommands(program: Command, deps: UserCommandDeps): void {
  const why =
    'the admin API does not manage the people who sign in, so an admin token cannot make itself a console user';
  const users = program
    .command('users')
    .description("the console's users: a name, a password, and what they may see (database only)");
  users
    .command('add')
    .description(`add a console user; the password comes from stdin or ${PASSWORD_ENV}`)
    .argument('<name>', 'the person, as the audit log names them (a-z 0-9 . _ @ -)')
    .option('--service-team', 'sees every workspace')
    .option('--workspace <slug>', 'sees this one workspace only')
    .action((name: string, options: { serviceTeam?: boolean; workspace?: string }) =>
      deps.onDatabase('users', why, async ({ store, rules }) => {
        if (Boolean(options.serviceTeam) === (options.workspace !== undefined))
          throw new UsageError('give either --service-team or --workspace <slug>');
        const password = await readSecret(
          deps.env,
          PASSWORD_ENV,
          `give the password on stdin or in ${PASSWORD_ENV}, never as an argument; e.g. read -rs PW && printf '%s\\n' "$PW" | lead-gateway users add ...`,
        );
        const workspace = options.workspace ?? null;
        const user = await createConsoleUser(store, rules.current(), {
          name,
          password,
          workspace,
          createdBy: deps.actor,
          sharedTokenName: deps.env.ADMIN_TOKEN_NAME || undefined,
        });
        deps.print(`Console user ${name} added (${workspace === null ? 'service team' : `workspace ${workspace}`}).`, {
          id: user.id,
          name,
          workspace,
        });
      }),
    );
  users
    .command('list')
    .description('list console users (passwords are stored only as scrypt hashes)')
    .action(() =>
      deps.onDatabase('users', why, async ({ store }) => {
        const items = (await store.snapshot((r) => r.consoleUsers.list())).map((u) => ({
          id: u.id,
          name: u.name,
          workspace: u.workspace,
          created_at: u.createdAt,
          created_by: u.createdBy,
          disabled_at: u.disabledAt,
        }));
        deps.print(
          table(
            ['NAME', 'SEES', 'CREATED', 'BY', 'DISABLED'],
            items.map((u) => [u.name, u.workspace ?? '(service team)', u.created_at, u.created_by, u.disabled_at]),
          ),
          listOf(items),
        );
      }),
    );
  users
    .command('disable')
    .description('disable a console user and end their sessions at once')
    .argument('<name>', 'the person')
    .action((name: string) =>
      deps.onDatabase('users', why, async ({ store }) => {
        const { sessionsEnded } = await disableConsoleUser(store, name);
        deps.print(`Disabled ${name}; ended ${sessionsEnded} session(s).`, { name, sessions_ended: sessionsEnded });
      }),
    );
  users
    .command('check-names')
    .description(
      'list names the audit log gives to more than one person (a console user and an admin token, or the shared token); exit 1 if any',
    )
    .action(() =>
      deps.onDatabase('users', why, async ({ store }) => {
        const found = await nameCollisions(store, deps.env.ADMIN_TOKEN_NAME || undefined);
        const items = found.map((c) => ({ name: c.name, holders: c.holders }));
        if (found.length === 0)
          return deps.print('No name is shared: every name in the audit log is one person.', listOf(items));
        deps.print(
          table(
            ['NAME', 'HELD BY'],
            items.map((c) => [c.name, c.holders.join(', ')]),
          ),
          listOf(items),
        );
        throw new AppError(
          'conflict',
          `${found.length} name(s) belong to more than one person; their audit entries cannot be told apart. Disable the console user or revoke the admin tokens of each, and give the person one name.`,
        );
      }),
    );
}
