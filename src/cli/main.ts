#!/usr/bin/env node
// The service team's command line: the admin API's service functions on the gateway's database, or the
// admin API of a running gateway (--url): the same commands, the same output.
import { userInfo } from 'node:os';
import { Command, InvalidArgumentError } from 'commander';
import type { StoreOptions } from '../store/open-store.js';
import type { z } from 'zod';
import { table } from './table.js';
import { AuditQuerySchema, KeyParamsSchema, ReasonSchema, ReportQuerySchema } from '../admin/schemas.js';
import { HELP_AFTER, linkSummary, reportText } from './human.js';
import { listOf } from '../admin/views.js';
import { withEnvFile } from '../config.js';
import { createAdminCredential, revokeAdminCredentials } from '../admin/credentials.js';
import type { Backend } from './backend.js';
import { databaseBackend, openDatabase, type Context } from './database-backend.js';
import { apiBackend } from './api-backend.js';
import { ADMIN_REQUEST_TIMEOUT_MS, adminClient, adminTokenFrom, gatewayBase } from './admin-client.js';
import { UsageError, exitFor } from './exit.js';
import { registerCopyCommand } from './copy.js';
import { registerUserCommands } from './users.js';

interface GlobalOptions {
  database: string;
  databaseUrl?: string;
  url?: string;
  timeout?: number;
  create?: boolean;
  rules: string;
  json?: boolean;
}

/**
 * The audit name of a change made with the CLI on the database: the account that runs it, which is
 * what holds the credential (access to the database). It cannot be chosen on the command line. In API
 * mode the gateway names the admin credential's operator instead.
 */
const CLI_ACTOR = `cli:${userInfo().username}`;


const positiveNumber = (value: string) => {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('must be a number of seconds above 0');
  return n;
};

/**
 * An argument checked by the admin API's own schema, so a value is refused the same way (exit 2) on the
 * database as by a gateway, which would answer it with a 422.
 */
const checkedBy =
  <T>(schema: z.ZodType<T>) =>
  (value: string): T => {
    const result = schema.safeParse(value);
    if (!result.success) throw new InvalidArgumentError(result.error.issues.map((i) => i.message).join('; '));
    return result.data;
  };
const quietHours = checkedBy(ReportQuerySchema.shape.quiet_period_hours.unwrap());
const auditLimit = checkedBy(AuditQuerySchema.shape.limit.unwrap());
const keyId = checkedBy(KeyParamsSchema.shape.key);
/** A reason holding a line break or an escape sequence would forge the audit table: refused as the API refuses it. */
const reasonArg = checkedBy(ReasonSchema);

/** Whether a PostgreSQL URL carries a password (in its userinfo, or as node-postgres's ?password=). */
function hasPassword(url: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.password !== '' || parsed.searchParams.has('password');
  } catch {
    return false;
  }
}

function createProgram(): Command {
  // The same .env the server reads: the CLI opens the database the server uses.
  const { env } = withEnvFile({ ...process.env });
  const program = new Command('lead-gateway')
    .description("Keys and migration state of lead-gateway integrations (the service team's tool).")
    .option('--database <path>', 'SQLite file of the gateway', env.DATABASE_PATH || 'data/lead-gateway.db')
    .option('--database-url <url>', 'PostgreSQL database of the gateway (instead of a SQLite file)', env.DATABASE_URL || undefined)
    .option('--url <base-url>', 'a running gateway instead, over its admin API; token from LEAD_GATEWAY_ADMIN_TOKEN (or ADMIN_TOKEN)', env.LEAD_GATEWAY_URL || undefined)
    .option('--timeout <seconds>', `with --url: how long one request may take (default ${ADMIN_REQUEST_TIMEOUT_MS / 1000})`, positiveNumber)
    .option('--create', 'create the database file if there is none (otherwise the CLI only opens an existing one)')
    .option('--rules <dir>', 'rules folder', env.RULES_DIR || 'rules')
    .option('--json', 'print JSON for scripts instead of tables')
    .addHelpText('after', HELP_AFTER)
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();

  const globals = () => program.opts<GlobalOptions>();
  const print = (human: string, data: unknown) => console.log(globals().json ? JSON.stringify(data, null, 2) : human);
  const given = (option: string) => program.getOptionValueSource(option) === 'cli';

  /** The gateway's base URL when the commands go to its admin API, else null (the database). */
  function apiTarget(): string | null {
    const o = globals();
    if (given('url') && (given('database') || given('databaseUrl'))) throw new UsageError('--url names a gateway and --database/--database-url a database: give one');
    // LEAD_GATEWAY_URL is the CLI's own variable, so it outranks the server's DATABASE_* (from the
    // environment or .env); a database named on the command line outranks it in turn.
    if (o.url === undefined || given('database') || given('databaseUrl')) {
      if (given('timeout')) throw new UsageError('--timeout is for requests to a gateway: give it with --url');
      return null;
    }
    if (given('create')) throw new UsageError('--create makes a SQLite file; a gateway reached with --url has its own database');
    if (given('rules')) throw new UsageError('--rules: a gateway reached with --url applies its own rules');
    return gatewayBase(o.url);
  }

  async function database(): Promise<Context> {
    const o = globals();
    if (o.databaseUrl && given('database')) throw new UsageError('--database and --database-url name two databases: give one');
    // As the server: both variables set is refused, unless the command line names the one meant.
    if (env.DATABASE_URL && env.DATABASE_PATH && !given('databaseUrl') && !given('database')) {
      throw new UsageError('DATABASE_URL and DATABASE_PATH are both set: set DATABASE_URL for PostgreSQL or DATABASE_PATH for SQLite, not both (or give --database-url or --database)');
    }
    // As with the admin token: a password on the command line shows in `ps` and the shell's history.
    if (given('databaseUrl') && o.databaseUrl && hasPassword(o.databaseUrl)) {
      throw new UsageError('--database-url holds a password, which would show in ps and the shell history: put the URL in DATABASE_URL (the environment or .env), or the password in PGPASSWORD or ~/.pgpass');
    }
    if (o.databaseUrl && o.create) throw new UsageError('--create makes a SQLite file; a PostgreSQL database is created by its operator (createdb), and the CLI migrates it');
    const options: StoreOptions = o.databaseUrl
      ? { engine: 'postgres', url: o.databaseUrl, poolSize: 2 }
      : { engine: 'sqlite', path: o.database, synchronous: 'FULL', mustExist: !o.create };
    return openDatabase(options, o.rules);
  }

  /** A command with an admin API equivalent: on the database or on a running gateway. */
  async function withBackend(fn: (backend: Backend) => Promise<void>): Promise<void> {
    const base = apiTarget();
    // Which database or gateway a change went to is the first question when it seems to have gone
    // nowhere: named on stderr once it answered (an unusable one is a single error line instead).
    let backend: Backend;
    if (base === null) {
      const ctx = await database();
      console.error(ctx.location);
      backend = databaseBackend(ctx, CLI_ACTOR);
    } else {
      const timeoutMs = (globals().timeout ?? ADMIN_REQUEST_TIMEOUT_MS / 1000) * 1000;
      backend = apiBackend(adminClient(base, adminTokenFrom(env), { timeoutMs, onAnswer: () => console.error(`gateway: ${base}`) }));
    }
    try {
      await fn(backend);
    } finally {
      await backend.close();
    }
  }

  /** A command without an admin API equivalent: refused in API mode, saying why. */
  async function onDatabase(command: string, why: string, fn: (ctx: Context) => Promise<void>): Promise<void> {
    if (apiTarget() !== null) throw new UsageError(`${command} works on the database only (--database or --database-url, not --url): ${why}`);
    const ctx = await database();
    console.error(ctx.location);
    try {
      await fn(ctx);
    } finally {
      await ctx.close();
    }
  }

  program
    .command('migrate')
    .description("bring the database's schema up to date (the gateway also does at start, under the same lock; database only)")
    .action(() =>
      onDatabase('migrate', 'a running gateway brought its schema up to date when it started', async ({ store }) => {
        const { version, applied } = store.schema;
        const human = applied.length > 0 ? `Applied migration(s) ${applied.join(', ')}; the schema is at version ${version}.` : `The schema is up to date at version ${version}.`;
        print(human, { engine: store.engine, version, applied });
      }),
    );

  program
    .command('integrations')
    .description('list integrations with their migration state')
    .action(() =>
      withBackend(async (b) => {
        const data = await b.integrations();
        print(table(['HANDLE', 'STATE', 'NAME', 'ID'], data.items.map((d) => [d.handle, d.state, d.name, d.id])), data);
      }),
    );

  program
    .command('keys')
    .description('list the keys of an integration (by prefix; values are never stored)')
    .argument('<integration>', 'id or workspace:integration handle')
    .action((ref: string) =>
      withBackend(async (b) => {
        const data = await b.keys(ref);
        print(table(['ID', 'PREFIX', 'KIND', 'CREATED', 'BY', 'LAST USED', 'REVOKED'], data.items.map((k) => [k.id, k.prefix || '-', k.kind, k.created_at, k.created_by, k.last_used_at, k.revoked_at])), data);
      }),
    );

  program
    .command('import-key')
    .description('import an existing legacy key so unchanged bots keep working through the gateway')
    .argument('<integration>', 'id or workspace:integration handle')
    .option('--key <value>', 'the legacy key itself')
    .option('--hash <sha256>', 'or its SHA-256, hex')
    .option('--reason <text>', 'why, for the audit log (no control characters)', reasonArg)
    .action((ref: string, o: { key?: string; hash?: string; reason?: string }) => {
      if ((o.key === undefined) === (o.hash === undefined)) throw new UsageError('give exactly one of --key or --hash');
      if (o.hash !== undefined && !/^[0-9a-fA-F]{64}$/.test(o.hash)) throw new UsageError('--hash must be 64 hex digits (SHA-256)');
      return withBackend(async (b) => {
        const key = await b.importKey(ref, o);
        print(`Imported legacy key ${key.prefix ? `${key.prefix}… ` : ''}(id ${key.id}) for ${ref}.`, key);
      });
    });

  program
    .command('issue-key')
    .description('issue the additional v1 key (legacy -> migrating); links legacy-created leads')
    .argument('<integration>', 'id or workspace:integration handle')
    .option('--reason <text>', 'why, for the audit log (no control characters)', reasonArg)
    .action((ref: string, o: { reason?: string }) =>
      withBackend(async (b) => {
        const r = await b.issueKey(ref, o.reason);
        const links = { linked_leads: r.linked_leads ?? 0, unlinked_leads: r.unlinked_leads ?? [] };
        // The key comes last, set apart, so it is not lost above a long report.
        print([`state: ${r.state}`, ...linkSummary(links), '', `v1 key for ${ref} (shown once, store it now):`, '', `  ${r.key}`, ''].join('\n'), r);
      }),
    );

  program
    .command('link')
    .description('re-run the linking of legacy-created leads (after fixing the legacy rule), without a new key')
    .argument('<integration>', 'id or workspace:integration handle')
    .option('--reason <text>', 'why, for the audit log (no control characters)', reasonArg)
    .action((ref: string, o: { reason?: string }) =>
      withBackend(async (b) => {
        const links = await b.link(ref, o.reason);
        print(linkSummary(links).join('\n'), links);
      }),
    );

  program
    .command('revoke-key')
    .description('revoke one key of an integration at once (see `keys` for ids); the others go on working')
    .argument('<integration>', 'id or workspace:integration handle')
    .argument('<key-id>', "the key's id", keyId)
    .option('--reason <text>', 'why, for the audit log (no control characters)', reasonArg)
    .action((ref: string, keyId: string, o: { reason?: string }) =>
      withBackend(async (b) => {
        const key = await b.revokeKey(ref, keyId, o.reason);
        print(`Revoked ${key.kind} key ${key.id}${key.prefix ? ` (${key.prefix}…)` : ''} of ${ref}.`, key);
      }),
    );

  program
    .command('renew')
    .description('"renew key": revoke every key of the integration at once, issue one new v1 key')
    .argument('<integration>', 'id or workspace:integration handle')
    .option('--reason <text>', 'why, for the audit log (no control characters)', reasonArg)
    .action((ref: string, o: { reason?: string }) =>
      withBackend(async (b) => {
        const r = await b.renew(ref, o.reason);
        print(`Revoked ${r.revoked_keys ?? 0} key(s). New v1 key for ${ref} (shown once):\n  ${r.key}`, r);
      }),
    );

  program
    .command('switch-off')
    .description('switch the deprecated interface off for an integration (its old key then gets 403)')
    .argument('<integration>', 'id or workspace:integration handle')
    .requiredOption('--reason <text>', 'why, for the audit log (no control characters)', reasonArg)
    .option('--force', 'even if legacy calls were seen within the quiet period')
    .option('--quiet-hours <n>', 'quiet period in hours (default 24)', quietHours)
    .action((ref: string, o: { reason: string; force?: boolean; quietHours?: number }) =>
      withBackend(async (b) => {
        const state = await b.switchOff(ref, { reason: o.reason, force: o.force ?? false, quietHours: o.quietHours });
        print(`${ref} is now ${state.state}.`, state);
      }),
    );

  program
    .command('rollback')
    .description('roll a switch-off back to migrating (the old key works again)')
    .argument('<integration>', 'id or workspace:integration handle')
    .requiredOption('--reason <text>', 'why, for the audit log (no control characters)', reasonArg)
    .action((ref: string, o: { reason: string }) =>
      withBackend(async (b) => {
        const state = await b.rollback(ref, o.reason);
        print(`${ref} is now ${state.state}.`, state);
      }),
    );

  program
    .command('report')
    .description('migration report: legacy and v1 calls, ignored fields, unlinked leads, readiness')
    .argument('<integration>', 'id or workspace:integration handle')
    .option('--quiet-hours <n>', 'quiet period in hours (default 24)', quietHours)
    .action((ref: string, o: { quietHours?: number }) =>
      withBackend(async (b) => {
        const r = await b.report(ref, o.quietHours);
        print(reportText(r), r);
      }),
    );

  program
    .command('replicas')
    .description('the live gateway replicas on the database, the rules version each runs, and whether they differ (PostgreSQL, or --url)')
    .action(() =>
      withBackend(async (b) => {
        const data = await b.replicas();
        const rows = data.items.map((r) => [r.id, r.rules_version ?? '-', r.rules_loaded_at ?? '-', r.last_heartbeat_at, r.last_reload_error ? `failed at ${r.last_reload_error.at}` : '-']);
        const summary = data.drift
          ? `DRIFT: the live replicas run ${data.rules_versions.length} versions of the rules: ${data.rules_versions.join(', ')}`
          : `rules: ${data.rules_versions[0] ?? 'none recorded'} on every live replica`;
        print([table(['ID', 'RULES', 'LOADED', 'HEARTBEAT', 'LAST RELOAD'], rows), '', summary].join('\n'), data);
      }),
    );

  program
    .command('audit')
    .description('the audit log, newest first')
    .argument('[integration]', 'id or workspace:integration handle (all when omitted)')
    .option('--limit <n>', 'how many entries', auditLimit, 50)
    .action((ref: string | undefined, o: { limit: number }) =>
      withBackend(async (b) => {
        const { list, handles } = await b.audit(ref, o.limit);
        const handleOf = (integrationId: string) => handles.get(integrationId) ?? integrationId;
        print(
          table(['AT', 'INTEGRATION', 'ACTION', 'STATE', 'ACTOR', 'REASON'], list.items.map((e) => [e.at, handleOf(e.integration_id), e.action, `${e.from_state} -> ${e.to_state}`, e.actor, e.reason])),
          list,
        );
      }),
    );

  // The credentials the admin API trusts are managed where the database is: an admin token cannot
  // mint or revoke admin tokens, so one stolen token cannot make itself others or lock operators out.
  const tokensWhy = 'the admin API does not manage its own credentials, so an admin token cannot mint or revoke admin tokens';
  const tokens = program.command('admin-token').description('named admin credentials: the audit log names their operator (database only)');
  tokens
    .command('create')
    .description('issue a personal admin token for an operator (shown once)')
    .argument('<name>', 'the operator, as the audit log names them (a-z 0-9 . _ @ -)')
    .action((name: string) =>
      onDatabase('admin-token', tokensWhy, async ({ store }) => {
        const { credential, token } = await createAdminCredential(store, name, CLI_ACTOR, env.ADMIN_TOKEN_NAME || undefined);
        print(`Admin token for ${name} (shown once, hand it over safely):\n\n  ${token}\n`, { id: credential.id, name, prefix: credential.prefix, token });
      }),
    );
  tokens
    .command('list')
    .description('list admin credentials by name and prefix (tokens are never stored)')
    .action(() =>
      onDatabase('admin-token', tokensWhy, async ({ store }) => {
        const list = await store.read((r) => r.adminCredentials.list());
        const items = list.map((c) => ({ id: c.id, name: c.name, prefix: c.prefix, created_at: c.createdAt, created_by: c.createdBy, revoked_at: c.revokedAt }));
        print(table(['NAME', 'PREFIX', 'CREATED', 'BY', 'REVOKED'], items.map((c) => [c.name, c.prefix, c.created_at, c.created_by, c.revoked_at])), listOf(items));
      }),
    );
  tokens
    .command('revoke')
    .description("revoke an operator's admin tokens at once")
    .argument('<name>', 'the operator')
    .action((name: string) =>
      onDatabase('admin-token', tokensWhy, async ({ store }) => {
        const revoked = await revokeAdminCredentials(store, name);
        print(`Revoked ${revoked} admin token(s) of ${name}.`, { name, revoked });
      }),
    );

  registerCopyCommand(program, { env, print, given });
  registerUserCommands(program, { env, actor: CLI_ACTOR, print, onDatabase });
  return program;
}

async function main(argv: string[]): Promise<number> {
  try {
    await createProgram().parseAsync(argv);
    return 0;
  } catch (error) {
    return exitFor(error);
  }
}

process.exitCode = await main(process.argv);
