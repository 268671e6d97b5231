// `lead-gateway admin-token create|list|revoke`: named admin credentials, managed where the database is.
import type { Command } from 'commander';
import { createAdminCredential, revokeAdminCredentials } from '../admin/credentials.js';
import { listOf } from '../admin/views.js';
import { table } from './table.js';
import type { CommandDeps } from './command-deps.js';

export function registerAdminTokenCommands(program: Command, deps: CommandDeps): void {
  // The credentials the admin API trusts are managed where the database is: an admin token cannot
  // mint or revoke admin tokens, so one stolen token cannot make itself others or lock operators out.
  const tokensWhy =
    'the admin API does not manage its own credentials, so an admin token cannot mint or revoke admin tokens';
  const tokens = program
    .command('admin-token')
    .description('named admin credentials: the audit log names their operator (database only)');
  tokens
    .command('create')
    .description('issue a personal admin token for an operator (shown once)')
    .argument('<name>', 'the operator, as the audit log names them (a-z 0-9 . _ @ -)')
    .action((name: string) =>
      deps.onDatabase('admin-token', tokensWhy, async ({ store }) => {
        const { credential, token } = await createAdminCredential(
          store,
          name,
          deps.actor,
          deps.env.ADMIN_TOKEN_NAME || undefined,
        );
        deps.print(`Admin token for ${name} (shown once, hand it over safely):\n\n  ${token}\n`, {
          id: credential.id,
          name,
          prefix: credential.prefix,
          token,
        });
      }),
    );
  tokens
    .command('list')
    .description('list admin credentials by name and prefix (tokens are never stored)')
    .action(() =>
      deps.onDatabase('admin-token', tokensWhy, async ({ store }) => {
        const list = await store.snapshot((r) => r.adminCredentials.list());
        const items = list.map((c) => ({
          id: c.id,
          name: c.name,
          prefix: c.prefix,
          created_at: c.createdAt,
          created_by: c.createdBy,
          revoked_at: c.revokedAt,
        }));
        deps.print(
          table(
            ['NAME', 'PREFIX', 'CREATED', 'BY', 'REVOKED'],
            items.map((c) => [c.name, c.prefix, c.created_at, c.created_by, c.revoked_at]),
          ),
          listOf(items),
        );
      }),
    );
  tokens
    .command('revoke')
    .description("revoke an operator's admin tokens at once")
    .argument('<name>', 'the operator')
    .action((name: string) =>
      deps.onDatabase('admin-token', tokensWhy, async ({ store }) => {
        const revoked = await revokeAdminCredentials(store, name);
        deps.print(`Revoked ${revoked} admin token(s) of ${name}.`, { name, revoked });
      }),
    );
}
