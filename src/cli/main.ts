#!/usr/bin/env node
// The service team's command line: the admin API's service functions on the gateway's database, or the
// admin API of a running gateway (--url): the same commands, the same output.
import { userInfo } from 'node:os';
import { Command, InvalidArgumentError } from 'commander';
import type { StoreOptions } from '../store/open-store.js';
import { HELP_AFTER } from './human.js';
import { withEnvFile, withSecretFiles } from '../config.js';
import type { Backend } from './backend.js';
import { databaseBackend, openDatabase, type Context } from './database-backend.js';
import { apiBackend } from './api-backend.js';
import {
  ADMIN_REQUEST_TIMEOUT_MS,
  adminClient,
  adminTokenFrom,
  gatewayBase,
  type AdminClient,
} from './admin-client.js';
import { EnvironmentError, UsageError, exitFor } from './exit.js';
import { registerCopyCommand } from './copy.js';
import { registerUserCommands } from './users.js';
import { registerPortingCommands } from './porting.js';
import { registerTestMatchesCommand } from './test-matches.js';
import { registerBrownoutCommands } from './brownouts.js';
import { registerSchemaCommands } from './schema.js';
import { registerMigrationCommands } from './migration.js';
import { registerAdminTokenCommands } from './admin-tokens.js';
import { registerRulesCommands } from './rules.js';
import type { CommandDeps } from './command-deps.js';
import { VERSION } from '../version.js';
import { registerPortingGuideCommand } from './porting-guide.js';
import { printErr, printOut } from './output.js';
import { allowHttpHostsFrom } from './webhook-backend.js';
import { registerWebhookCommands } from './webhooks.js';

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
  // Secrets mounted as files (ADMIN_TOKEN_FILE, DATABASE_URL_FILE) are read as the server reads them.
  const secrets = withSecretFiles(withEnvFile({ ...process.env }).env);
  if (secrets.problems.length > 0) throw new EnvironmentError(secrets.problems.join('; '));
  const env = secrets.env;
  const program = new Command('lead-gateway')
    .description("Keys and migration state of lead-gateway integrations (the service team's tool).")
    .version(`lead-gateway ${VERSION}`, '--version', 'print the version and exit')
    .option('--database <path>', 'SQLite file of the gateway', env.DATABASE_PATH || 'data/lead-gateway.db')
    .option(
      '--database-url <url>',
      'PostgreSQL database of the gateway (instead of a SQLite file)',
      env.DATABASE_URL || undefined,
    )
    .option(
      '--url <base-url>',
      'a running gateway instead, over its admin API; token from LEAD_GATEWAY_ADMIN_TOKEN (or ADMIN_TOKEN)',
      env.LEAD_GATEWAY_URL || undefined,
    )
    .option(
      '--timeout <seconds>',
      `with --url: how long one request may take (default ${ADMIN_REQUEST_TIMEOUT_MS / 1000})`,
      positiveNumber,
    )
    .option('--create', 'create the database file if there is none (otherwise the CLI only opens an existing one)')
    .option('--rules <dir>', 'rules folder', env.RULES_DIR || 'rules')
    .option('--json', 'print JSON for scripts instead of tables')
    .addHelpText('after', HELP_AFTER)
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();

  const globals = () => program.opts<GlobalOptions>();
  const print = (human: string, data: unknown) => printOut(globals().json ? JSON.stringify(data, null, 2) : human);
  const given = (option: string) => program.getOptionValueSource(option) === 'cli';

  /** The gateway's base URL when the commands go to its admin API, else null (the database). */
  function apiTarget(): string | null {
    const o = globals();
    if (given('url') && (given('database') || given('databaseUrl')))
      throw new UsageError('--url names a gateway and --database/--database-url a database: give one');
    // LEAD_GATEWAY_URL is the CLI's own variable, so it outranks the server's DATABASE_* (from the
    // environment or .env); a database named on the command line outranks it in turn.
    if (o.url === undefined || given('database') || given('databaseUrl')) {
      if (given('timeout')) throw new UsageError('--timeout is for requests to a gateway: give it with --url');
      return null;
    }
    if (given('create'))
      throw new UsageError('--create makes a SQLite file; a gateway reached with --url has its own database');
    if (given('rules')) throw new UsageError('--rules: a gateway reached with --url applies its own rules');
    return gatewayBase(o.url);
  }

  async function database(): Promise<Context> {
    const o = globals();
    if (o.databaseUrl && given('database'))
      throw new UsageError('--database and --database-url name two databases: give one');
    // As the server: both variables set is refused, unless the command line names the one meant.
    if (env.DATABASE_URL && env.DATABASE_PATH && !given('databaseUrl') && !given('database')) {
      throw new UsageError(
        'DATABASE_URL and DATABASE_PATH are both set: set DATABASE_URL for PostgreSQL or DATABASE_PATH for SQLite, not both (or give --database-url or --database)',
      );
    }
    // As with the admin token: a password on the command line shows in `ps` and the shell's history.
    if (given('databaseUrl') && o.databaseUrl && hasPassword(o.databaseUrl)) {
      throw new UsageError(
        '--database-url holds a password, which would show in ps and the shell history: put the URL in DATABASE_URL (the environment or .env), or the password in PGPASSWORD or ~/.pgpass',
      );
    }
    if (o.databaseUrl && o.create)
      throw new UsageError(
        '--create makes a SQLite file; a PostgreSQL database is created by its operator (createdb), and the CLI migrates it',
      );
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
      printErr(ctx.location);
      backend = databaseBackend(ctx, CLI_ACTOR, () => allowHttpHostsFrom(env));
    } else {
      const timeoutMs = (globals().timeout ?? ADMIN_REQUEST_TIMEOUT_MS / 1000) * 1000;
      backend = apiBackend(
        adminClient(base, adminTokenFrom(env), { timeoutMs, onAnswer: () => printErr(`gateway: ${base}`) }),
      );
    }
    try {
      await fn(backend);
    } finally {
      await backend.close();
    }
  }

  /** The admin API of the gateway --url names, for a command that only a running gateway can answer. */
  function gateway(command: string): AdminClient {
    const base = apiTarget();
    if (base === null)
      throw new UsageError(
        `${command} compares with a running gateway: give --url (or LEAD_GATEWAY_URL) and the admin token in LEAD_GATEWAY_ADMIN_TOKEN`,
      );
    const timeoutMs = (globals().timeout ?? ADMIN_REQUEST_TIMEOUT_MS / 1000) * 1000;
    return adminClient(base, adminTokenFrom(env), { timeoutMs, onAnswer: () => printErr(`gateway: ${base}`) });
  }

  /** A command without an admin API equivalent: refused in API mode, saying why. */
  async function onDatabase(command: string, why: string, fn: (ctx: Context) => Promise<void>): Promise<void> {
    if (apiTarget() !== null)
      throw new UsageError(`${command} works on the database only (--database or --database-url, not --url): ${why}`);
    const ctx = await database();
    printErr(ctx.location);
    try {
      await fn(ctx);
    } finally {
      await ctx.close();
    }
  }

  const deps: CommandDeps = { env, actor: CLI_ACTOR, print, given, withBackend, onDatabase };
  registerSchemaCommands(program, deps);
  registerMigrationCommands(program, deps);
  registerAdminTokenCommands(program, deps);
  registerRulesCommands(program, { print, gateway, given });
  registerCopyCommand(program, { env, print, given });
  registerUserCommands(program, { env, actor: CLI_ACTOR, print, onDatabase });
  registerPortingCommands(program, { print, withBackend });
  registerTestMatchesCommand(program, { print, withBackend });
  registerBrownoutCommands(program, { print, withBackend });
  registerPortingGuideCommand(program, { print, withBackend });
  registerWebhookCommands(program, { print, withBackend });
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
