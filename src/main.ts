// The process: reads the environment, builds the logger, store and app, listens, handles signals.
import { parseArgs } from 'node:util';
import { buildApp } from './app.js';
import { ConfigError, parseConfig } from './config.js';
import { openSqliteStore } from './db/sqlite-store.js';
import { ensureDemoKeys } from './demo.js';
import { createLogger } from './logging.js';
import { RulesError, createRulesHolder } from './rules/loader.js';

/** How long SIGTERM waits for in-flight requests before closing the connections left. */
const DRAIN_DEADLINE_MS = 10_000;

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { demo: { type: 'boolean', default: false } }, strict: true });
  const env = { ...process.env };
  if (values.demo) env.DEMO_MODE = 'true';
  const config = parseConfig(env);
  const logger = createLogger(config.logLevel);

  const rules = createRulesHolder(config.rulesDir);
  const store = openSqliteStore({ path: config.databasePath, synchronous: config.sqliteSynchronous });
  const demo = config.demo ? await ensureDemoKeys(store, rules.current()) : null;
  const app = await buildApp(config, { store, rules, logger });

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
  process.on('SIGHUP', () => {
    const result = rules.reload();
    if (result.ok) logger.info('rules reloaded');
    else logger.error({ problems: result.problems }, 'rules reload failed; the previous rules stay in force');
  });

  const address = await app.listen({ port: config.port, host: config.host });
  logger.info({ address, database: config.databasePath, rules: config.rulesDir, demo: config.demo, connections: config.connections }, 'lead-gateway listening');
  if (demo) {
    console.log(
      [
        '',
        `  lead-gateway (demo mode) at ${address}`,
        `  integration:   ${demo.integration}`,
        `  v1 key:        ${demo.v1Key}`,
        `  admin token:   ${config.adminToken}`,
        '',
        `  curl -X POST ${address}/api/integrations/v1/leads/ \\`,
        `    -H 'Authorization: Bearer ${demo.v1Key}' -H 'Content-Type: application/json' \\`,
        `    -d '{"event_id":"demo-1","external_contact_id":"telegram:1","first_name":"Aziza","phone":"+998901234567"}'`,
        '',
      ].join('\n'),
    );
  }
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError || error instanceof RulesError) {
    console.error(error.message);
  } else if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
    console.error(`Cannot listen: ${(error as Error).message}. Stop the other process or set PORT.`);
  } else {
    console.error(error);
  }
  process.exit(1);
});
