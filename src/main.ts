// The process: reads the environment, builds the logger, store and app, listens, handles signals.
import { parseArgs } from 'node:util';
import { buildApp } from './app.js';
import { ConfigError, parseConfig, withEnvFile } from './config.js';
import { openStore, storeLocation, storeOptionsFrom } from './store/open-store.js';
import { StoreOpenError } from './store/store.js';
import { ensureDemoKeys, revokeDemoKeys, type DemoCredentials, type DemoKeyStatus } from './demo.js';
import { createUsageRecorder } from './migration/usage.js';
import { createLogger } from './logging.js';
import { RulesError, createRulesHolder } from './rules/loader.js';
import { shareRules } from './rules/replicas.js';
import { openSharedLimiters } from './rate-limit/shared-limiter.js';
import { nameCollisions } from './admin/credentials.js';
import { VERSION } from './version.js';
import type { ScheduleTestHooks } from './migration/schedule.js';

/** Start-up failed for a reason its message tells an operator in full (no stack). */
class StartupError extends Error {}

/** The command line was wrong (an unknown option, a value where none is taken): one line, exit 2. */
class UsageError extends Error {}

const USAGE = `Usage: node dist/main.js [--demo] [--help] [--version]

Runs the lead-gateway server; its configuration comes from the environment and a .env file in the
working directory (README.md, "Configuration"). The service team's tool is the lead-gateway CLI.

Options:
  --demo      demo mode: the example rules' keys and an admin token, printed at start (never in production)
  --help      print this and exit
  --version   print the version and exit

Signals: SIGTERM/SIGINT stop after the requests in flight, SIGHUP reloads the rules.`;

/** The command line: --demo, or --help / --version (printed, exit 0). Anything else is a usage error. */
function readArguments(argv: string[]): { demo: boolean } | 'done' {
  let values: { demo?: boolean; help?: boolean; version?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        demo: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean' },
      },
      strict: true,
    }));
  } catch (error) {
    // node:util's messages are one line save for a hint to use '--'; the first line names the option.
    throw new UsageError(`${(error as Error).message.split('\n')[0]} (node dist/main.js --help for usage)`);
  }
  if (values.help) console.log(USAGE);
  else if (values.version) console.log(`lead-gateway ${VERSION}`);
  else return { demo: values.demo ?? false };
  return 'done';
}

/** How long SIGTERM waits for in-flight requests before closing the connections left. */
const DRAIN_DEADLINE_MS = 10_000;

async function main(): Promise<void> {
  const values = readArguments(process.argv.slice(2));
  if (values === 'done') return;
  const { env, file, fromFile } = withEnvFile({ ...process.env });
  if (values.demo) env.DEMO_MODE = 'true';
  const config = parseConfig(env, { file, fromFile });
  const logger = createLogger(config.logLevel);
  if (file)
    logger.info(
      { file, variables: [...fromFile].sort() },
      'read variables the environment does not set from the env file',
    );

  const rules = createRulesHolder(config.rulesDir);
  const storeOptions = storeOptionsFrom(config);
  // A PostgreSQL connection dropped while idle (a server restart, a failover) is replaced by the pool; the log says so.
  if (storeOptions.engine === 'postgres') {
    storeOptions.onIdleError = (error) =>
      logger.warn({ err: error }, 'database connection lost while idle; the pool opens a new one');
    storeOptions.log = logger;
  }
  const database = storeLocation(storeOptions);
  const store = await openStore(storeOptions).catch((error: unknown) => {
    throw error instanceof StoreOpenError
      ? new StartupError(`${config.databaseUrl ? 'DATABASE_URL' : 'DATABASE_PATH'}: ${error.message}.`)
      : error;
  });
  const usage = createUsageRecorder(store, undefined, undefined, logger, (id) => rules.current().findIntegration(id));
  const demo = config.demo ? await ensureDemoKeys(store, usage, rules.current()) : null;
  if (!config.demo) {
    // A database that once ran in demo mode holds published keys; they never work in production.
    const revoked = await revokeDemoKeys(store, usage);
    if (revoked > 0)
      logger.warn({ revoked }, 'revoked the demo keys found in the database: they never work outside demo mode');
  }
  // Names the audit log gives to two people at once (made before the rule, or written around it): said at
  // every start until an operator settles them (docs/operations/admin-access.md#admin-credentials).
  const collisions = await nameCollisions(store, config.adminTokenName);
  if (collisions.length > 0) {
    logger.warn(
      { names: collisions.map((c) => `${c.name} (${c.holders.join(', ')})`) },
      'names shared by more than one person in the audit log: run lead-gateway users check-names',
    );
  }
  // On PostgreSQL the replicas count requests and failed authentications together (docs/operations/rate-limits.md).
  const limiters = config.databaseUrl
    ? await openSharedLimiters(config.databaseUrl, logger, {
        replicas: store.replicas,
        syncMs: config.rateLimitSyncMs,
      }).catch(async (error: unknown) => {
        await store.close();
        throw new StartupError(`DATABASE_URL: cannot open the shared rate limits: ${(error as Error).message}.`);
      })
    : undefined;
  // The rules this process runs, recorded for the other replicas; a reload asked through any replica reaches it.
  const sharedRules = await shareRules({ replicas: store.replicas, rules, log: logger });
  const app = await buildApp(
    { ...config, scheduleTestHooks: scheduleTestHooks(env) },
    { store, rules, logger, usage, sharedRules, ...(limiters ? { limiters } : {}) },
  );

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping: draining in-flight requests');
    // A client that holds its connection past the deadline is cut off; its request was answered or not.
    setTimeout(() => {
      logger.warn({ deadline_ms: DRAIN_DEADLINE_MS }, 'drain deadline passed: closing the remaining connections');
      app.server.closeAllConnections();
    }, DRAIN_DEADLINE_MS).unref();
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // SIGHUP reloads this process only (whoever changed its folder signals it): recorded, so drift shows.
  process.on('SIGHUP', () => void sharedRules.reloadHere('SIGHUP'));

  const address = await app.listen({ port: config.port, host: config.host });
  logger.info(
    {
      address,
      version: VERSION,
      database,
      engine: store.engine,
      rules: config.rulesDir,
      rules_version: rules.version().version,
      demo: config.demo,
      connections: config.connections,
    },
    'lead-gateway listening',
  );
  if (demo) console.log(demoBanner(address, demo, config.adminToken!));
}

/**
 * The process tests' hook into the scheduled switch-off (docs/testing.md), read only when NODE_ENV is
 * `test`: no deployment sets that, so a stray variable elsewhere changes nothing.
 */
function scheduleTestHooks(env: Record<string, string | undefined>): ScheduleTestHooks {
  if (env.NODE_ENV !== 'test') return {};
  const pause = Number(env.TEST_PAUSE_MID_SWITCH_OFF_MS ?? 0);
  return Number.isInteger(pause) && pause > 0 ? { pauseMidSwitchOffMs: pause } : {};
}

const keyLine = (status: DemoKeyStatus): string =>
  status.live
    ? status.secret
    : `revoked at ${status.revokedAt}; live now: ${status.liveKeys.join(', ') || 'none'} (shown once when issued)`;

/** What a newcomer needs for a first call; a demo key revoked since (a renewal) is reported, not printed. */
function demoBanner(address: string, demo: DemoCredentials, adminToken: string): string {
  const lines = [
    '',
    `  lead-gateway (demo mode) at ${address}`,
    `  integration:   ${demo.integration} (${demo.state})`,
    `  v1 key:        ${keyLine(demo.v1)}`,
    `  legacy key:    ${keyLine(demo.legacy)}`,
    `  admin token:   ${adminToken}`,
    '',
  ];
  if (demo.v1.live) {
    lines.push(
      `  curl -X POST ${address}/api/integrations/v1/leads/ \\`,
      `    -H 'Authorization: Bearer ${demo.v1.secret}' -H 'Content-Type: application/json' \\`,
      `    -d '{"event_id":"demo-1","external_contact_id":"telegram:1","first_name":"Aziza","phone":"+998901234567"}'`,
      '',
    );
  }
  return lines.join('\n');
}

main().catch((error: unknown) => {
  if (error instanceof UsageError) {
    console.error(error.message);
    process.exit(2);
  }
  if (error instanceof ConfigError || error instanceof RulesError || error instanceof StartupError) {
    console.error(error.message);
  } else if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
    console.error(`Cannot listen: ${(error as Error).message}. Stop the other process or set PORT.`);
  } else {
    console.error(error);
  }
  process.exit(1);
});
