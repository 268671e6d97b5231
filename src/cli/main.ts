#!/usr/bin/env node
// The service team's command line: the admin API's service functions, on the same database file.
import { userInfo } from 'node:os';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { AppError } from '../errors.js';
import { openStore, storeLocation, type StoreOptions } from '../store/open-store.js';
import { StoreOpenError, type Store } from '../store/store.js';
import { RulesError, createRulesHolder, type RulesHolder } from '../rules/loader.js';
import { integrationByRef } from '../admin/integration-ref.js';
import { createUsageRecorder, type UsageRecorder } from '../migration/usage.js';
import { importLegacyKey, issueV1Key, relinkLegacyLeads, renewKeys, revokeKey, rollback, switchOff, type LinkReport } from '../migration/service.js';
import { migrationReport } from '../migration/report.js';
import { table } from './table.js';
import { auditView, integrationView, issuedKeyView, keyView, linkView, listOf, stateView } from '../admin/views.js';
import { withEnvFile } from '../config.js';
import { createAdminCredential, revokeAdminCredentials } from '../admin/credentials.js';

/** Exit codes: 0 done, 1 refused (unknown integration, a state move not allowed), 2 usage, 3 environment. */
const EXIT = { refused: 1, usage: 2, environment: 3 } as const;

class UsageError extends Error {}
/** The database or rules cannot be used: exit 3 with one line, no stack. */
class EnvironmentError extends Error {}

interface Context {
  rules: RulesHolder;
  store: Store;
  usage: UsageRecorder;
}

interface GlobalOptions {
  database: string;
  databaseUrl?: string;
  create?: boolean;
  rules: string;
  json?: boolean;
}

/**
 * The audit name of a change made with the CLI: the account that runs it, which is what holds the
 * credential (access to the database file). It cannot be chosen on the command line.
 */
const CLI_ACTOR = `cli:${userInfo().username}`;

const wholeNumber = (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('must be a whole number');
  return n;
};

/** How many unlinked lead ids a summary names; `--json` lists them all. */
const FIRST_UNLINKED = 5;

/** Linked and unlinked legacy leads in a few lines: counts by reason and the first ids, never one line a lead. */
function linkSummary(links: LinkReport): string[] {
  const lines = [`legacy leads linked: ${links.linked}; not linked: ${links.unlinked.length}`];
  const byCode = new Map<string, { count: number; reason: string; ids: string[] }>();
  for (const u of links.unlinked) {
    const entry = byCode.get(u.code) ?? { count: 0, reason: u.reason, ids: [] };
    entry.count++;
    if (entry.ids.length < FIRST_UNLINKED) entry.ids.push(u.lead_id);
    byCode.set(u.code, entry);
  }
  for (const [code, e] of byCode) {
    const more = e.count > e.ids.length ? `, and ${e.count - e.ids.length} more (--json lists all)` : '';
    lines.push(`  ${e.count} ${code}${e.count === 1 ? `: ${e.reason}` : ` (e.g. ${e.reason})`}`, `    ${e.ids.join(', ')}${more}`);
  }
  return lines;
}

function createProgram(): Command {
  // The same .env the server reads: the CLI opens the database the server uses.
  const { env } = withEnvFile({ ...process.env });
  const program = new Command('lead-gateway')
    .description('Keys and migration state of lead-gateway integrations (the service team\'s tool).')
    .option('--database <path>', 'SQLite file of the gateway', env.DATABASE_PATH || 'data/lead-gateway.db')
    .option('--database-url <url>', 'PostgreSQL database of the gateway (instead of a SQLite file)', env.DATABASE_URL || undefined)
    .option('--create', 'create the database file if there is none (otherwise the CLI only opens an existing one)')
    .option('--rules <dir>', 'rules folder', env.RULES_DIR || 'rules')
    .option('--json', 'print JSON for scripts instead of tables')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();

  const globals = () => program.opts<GlobalOptions>();
  const print = (human: string, data: unknown) => console.log(globals().json ? JSON.stringify(data, null, 2) : human);

  async function run<T>(fn: (ctx: Context) => Promise<T>): Promise<T> {
    const o = globals();
    let rules: RulesHolder;
    let store: Store;
    if (o.databaseUrl && program.getOptionValueSource('database') === 'cli') throw new UsageError('--database and --database-url name two databases: give one');
    // As the server: both variables set is refused, unless the command line names the one meant.
    if (env.DATABASE_URL && env.DATABASE_PATH && program.getOptionValueSource('databaseUrl') !== 'cli' && program.getOptionValueSource('database') !== 'cli') {
      throw new UsageError('DATABASE_URL and DATABASE_PATH are both set: set DATABASE_URL for PostgreSQL or DATABASE_PATH for SQLite, not both (or give --database-url or --database)');
    }
    if (o.databaseUrl && o.create) throw new UsageError('--create makes a SQLite file; a PostgreSQL database is created by its operator (createdb), and the CLI migrates it');
    const options: StoreOptions = o.databaseUrl
      ? { engine: 'postgres', url: o.databaseUrl, poolSize: 2 }
      : { engine: 'sqlite', path: o.database, synchronous: 'FULL', mustExist: !o.create };
    try {
      rules = createRulesHolder(o.rules);
      store = await openStore(options);
    } catch (error) {
      if (error instanceof StoreOpenError) {
        const hint = error.problem === 'no such file' ? ' (the gateway creates it on its first start; pass --create to make an empty one here)' : '';
        const setting = options.engine === 'postgres' ? '--database-url / DATABASE_URL' : '--database / DATABASE_PATH';
        throw new EnvironmentError(`${setting}: ${error.message}${hint}.`);
      }
      (error as Error & { exitCode?: number }).exitCode = EXIT.environment;
      throw error;
    }
    // Which database a change went to is the first question when it seems to have gone nowhere.
    console.error(`database: ${storeLocation(options)}`);
    const usage = createUsageRecorder(store);
    try {
      return await fn({ rules, store, usage });
    } finally {
      await usage.close();
      await store.close();
    }
  }

  program
    .command('migrate')
    .description("bring the database's schema up to date (the gateway also does at start, under the same lock)")
    .action(() =>
      run(async ({ store }) => {
        const { version, applied } = store.schema;
        const human = applied.length > 0 ? `Applied migration(s) ${applied.join(', ')}; the schema is at version ${version}.` : `The schema is up to date at version ${version}.`;
        print(human, { engine: store.engine, version, applied });
      }),
    );

  program
    .command('integrations')
    .description('list integrations with their migration state')
    .action(() =>
      run(async ({ rules, store }) => {
        const list = [...rules.current().integrations.values()];
        const states = await store.read((r) => Promise.all(list.map((i) => r.states.get(i.id))));
        const data = list.map((i, n) => integrationView(i, states[n]!));
        print(table(['HANDLE', 'STATE', 'NAME', 'ID'], data.map((d) => [d.handle, d.state, d.name, d.id])), listOf(data));
      }),
    );

  program
    .command('keys')
    .description('list the keys of an integration (by prefix; values are never stored)')
    .argument('<integration>', 'id or workspace:integration handle')
    .action((ref: string) =>
      run(async ({ rules, store }) => {
        const integration = integrationByRef(rules, ref);
        const keys = await store.read((r) => r.keys.listForIntegration(integration.id));
        const data = keys.map(keyView);
        print(table(['ID', 'PREFIX', 'KIND', 'CREATED', 'BY', 'REVOKED'], data.map((k) => [k.id, k.prefix || '-', k.kind, k.created_at, k.created_by, k.revoked_at])), listOf(data));
      }),
    );

  program
    .command('import-key')
    .description('import an existing legacy key so unchanged bots keep working through the gateway')
    .argument('<integration>', 'id or workspace:integration handle')
    .option('--key <value>', 'the legacy key itself')
    .option('--hash <sha256>', 'or its SHA-256, hex')
    .option('--reason <text>', 'why, for the audit log')
    .action((ref: string, o: { key?: string; hash?: string; reason?: string }) =>
      run(async ({ rules, store, usage }) => {
        if ((o.key === undefined) === (o.hash === undefined)) throw new UsageError('give exactly one of --key or --hash');
        if (o.hash !== undefined && !/^[0-9a-fA-F]{64}$/.test(o.hash)) throw new UsageError('--hash must be 64 hex digits (SHA-256)');
        const key = await importLegacyKey({ store, usage }, integrationByRef(rules, ref), { key: o.key, hash: o.hash, actor: CLI_ACTOR, reason: o.reason ?? null });
        print(`Imported legacy key ${key.prefix ? `${key.prefix}… ` : ''}(id ${key.id}) for ${ref}.`, keyView(key));
      }),
    );

  program
    .command('issue-key')
    .description('issue the additional v1 key (legacy -> migrating); links legacy-created leads')
    .argument('<integration>', 'id or workspace:integration handle')
    .option('--reason <text>', 'why, for the audit log')
    .action((ref: string, o: { reason?: string }) =>
      run(async ({ rules, store, usage }) => {
        const r = await issueV1Key({ store, usage }, integrationByRef(rules, ref), { actor: CLI_ACTOR, reason: o.reason ?? null });
        // The key comes last, set apart, so it is not lost above a long report.
        print(
          [`state: ${r.state}`, ...linkSummary(r.links), '', `v1 key for ${ref} (shown once, store it now):`, '', `  ${r.secret}`, ''].join('\n'),
          issuedKeyView(r, r.state, linkView(r.links)),
        );
      }),
    );

  program
    .command('link')
    .description('re-run the linking of legacy-created leads (after fixing the legacy rule), without a new key')
    .argument('<integration>', 'id or workspace:integration handle')
    .option('--reason <text>', 'why, for the audit log')
    .action((ref: string, o: { reason?: string }) =>
      run(async ({ rules, store, usage }) => {
        const links = await relinkLegacyLeads({ store, usage }, integrationByRef(rules, ref), { actor: CLI_ACTOR, reason: o.reason ?? null });
        print(linkSummary(links).join('\n'), linkView(links));
      }),
    );

  program
    .command('revoke-key')
    .description('revoke one key of an integration at once (see `keys` for ids); the others go on working')
    .argument('<integration>', 'id or workspace:integration handle')
    .argument('<key-id>', 'the key\'s id')
    .option('--reason <text>', 'why, for the audit log')
    .action((ref: string, keyId: string, o: { reason?: string }) =>
      run(async ({ rules, store, usage }) => {
        const key = await revokeKey({ store, usage }, integrationByRef(rules, ref), keyId, { actor: CLI_ACTOR, reason: o.reason ?? null });
        print(`Revoked ${key.kind} key ${key.id}${key.prefix ? ` (${key.prefix}…)` : ''} of ${ref}.`, keyView(key));
      }),
    );

  program
    .command('renew')
    .description('"renew key": revoke every key of the integration at once, issue one new v1 key')
    .argument('<integration>', 'id or workspace:integration handle')
    .option('--reason <text>', 'why, for the audit log')
    .action((ref: string, o: { reason?: string }) =>
      run(async ({ rules, store, usage }) => {
        const r = await renewKeys({ store, usage }, integrationByRef(rules, ref), { actor: CLI_ACTOR, reason: o.reason ?? null });
        print(`Revoked ${r.revoked} key(s). New v1 key for ${ref} (shown once):\n  ${r.secret}`, issuedKeyView(r, r.state, { revoked_keys: r.revoked }));
      }),
    );

  program
    .command('switch-off')
    .description('switch the deprecated interface off for an integration (its old key then gets 403)')
    .argument('<integration>', 'id or workspace:integration handle')
    .requiredOption('--reason <text>', 'why, for the audit log')
    .option('--force', 'even if legacy calls were seen within the quiet period')
    .option('--quiet-hours <n>', 'quiet period in hours (default 24)', wholeNumber)
    .action((ref: string, o: { reason: string; force?: boolean; quietHours?: number }) =>
      run(async ({ rules, store, usage }) => {
        const integration = integrationByRef(rules, ref);
        const state = await switchOff({ store, usage }, integration, {
          actor: CLI_ACTOR,
          reason: o.reason,
          force: o.force ?? false,
          quietPeriodHours: o.quietHours,
        });
        print(`${ref} is now ${state}.`, stateView(integration, state));
      }),
    );

  program
    .command('rollback')
    .description('roll a switch-off back to migrating (the old key works again)')
    .argument('<integration>', 'id or workspace:integration handle')
    .requiredOption('--reason <text>', 'why, for the audit log')
    .action((ref: string, o: { reason: string }) =>
      run(async ({ rules, store, usage }) => {
        const integration = integrationByRef(rules, ref);
        const state = await rollback({ store, usage }, integration, { actor: CLI_ACTOR, reason: o.reason });
        print(`${ref} is now ${state}.`, stateView(integration, state));
      }),
    );

  program
    .command('report')
    .description('migration report: legacy and v1 calls, ignored fields, unlinked leads, readiness')
    .argument('<integration>', 'id or workspace:integration handle')
    .option('--quiet-hours <n>', 'quiet period in hours (default 24)', wholeNumber)
    .action((ref: string, o: { quietHours?: number }) =>
      run(async ({ rules, store, usage }) => {
        const r = await migrationReport({ store, usage }, integrationByRef(rules, ref), o.quietHours);
        const routes = [...r.legacy.routes.map((x) => ['legacy', x.route, x.calls_24h, x.calls_7d, x.last_seen]), ...r.v1.routes.map((x) => ['v1', x.route, x.calls_24h, x.calls_7d, x.last_seen])];
        print(
          [
            `${r.integration.handle} (${r.integration.name}): ${r.state}`,
            `readiness: ${r.readiness.verdict}${r.readiness.reasons.map((x) => `\n  - ${x}`).join('')}`,
            '',
            routes.length > 0 ? table(['API', 'ROUTE', '24H', '7D', 'LAST SEEN'], routes as (string | number | null)[][]) : 'no calls counted yet',
            '',
            `ignored legacy fields: ${r.ignored_legacy_fields.map((f) => `${f.field} (${f.calls})`).join(', ') || 'none'}`,
            `unlinked legacy leads: ${r.unlinked_legacy_leads.length}`,
            `live keys: ${r.keys.v1} v1, ${r.keys.legacy} legacy`,
          ].join('\n'),
          r,
        );
      }),
    );

  program
    .command('audit')
    .description('the audit log, newest first')
    .argument('[integration]', 'id or workspace:integration handle (all when omitted)')
    .option('--limit <n>', 'how many entries', wholeNumber, 50)
    .action((ref: string | undefined, o: { limit: number }) =>
      run(async ({ rules, store }) => {
        const id = ref === undefined ? null : integrationByRef(rules, ref).id;
        const entries = await store.read((r) => r.states.listAudit(id, o.limit));
        const handleOf = (integrationId: string) => rules.current().integrations.get(integrationId)?.handle ?? integrationId;
        print(
          table(['AT', 'INTEGRATION', 'ACTION', 'STATE', 'ACTOR', 'REASON'], entries.map((e) => [e.at, handleOf(e.integrationId), e.action, `${e.fromState} -> ${e.toState}`, e.actor, e.reason])),
          listOf(entries.map(auditView)),
        );
      }),
    );

  const adminToken = program.command('admin-token').description('named admin credentials: the audit log names their operator');
  adminToken
    .command('create')
    .description('issue a personal admin token for an operator (shown once)')
    .argument('<name>', 'the operator, as the audit log names them (a-z 0-9 . _ @ -)')
    .action((name: string) =>
      run(async ({ store }) => {
        const { credential, token } = await createAdminCredential(store, name, CLI_ACTOR, env.ADMIN_TOKEN_NAME || undefined);
        print(`Admin token for ${name} (shown once, hand it over safely):\n\n  ${token}\n`, { id: credential.id, name, prefix: credential.prefix, token });
      }),
    );
  adminToken
    .command('list')
    .description('list admin credentials by name and prefix (tokens are never stored)')
    .action(() =>
      run(async ({ store }) => {
        const list = await store.read((r) => r.adminCredentials.list());
        const items = list.map((c) => ({ id: c.id, name: c.name, prefix: c.prefix, created_at: c.createdAt, created_by: c.createdBy, revoked_at: c.revokedAt }));
        print(table(['NAME', 'PREFIX', 'CREATED', 'BY', 'REVOKED'], items.map((c) => [c.name, c.prefix, c.created_at, c.created_by, c.revoked_at])), listOf(items));
      }),
    );
  adminToken
    .command('revoke')
    .description("revoke an operator's admin tokens at once")
    .argument('<name>', 'the operator')
    .action((name: string) =>
      run(async ({ store }) => {
        const revoked = await revokeAdminCredentials(store, name);
        print(`Revoked ${revoked} admin token(s) of ${name}.`, { name, revoked });
      }),
    );

  return program;
}

async function main(argv: string[]): Promise<number> {
  try {
    await createProgram().parseAsync(argv);
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : EXIT.usage;
    if (error instanceof UsageError) {
      console.error(`error: ${error.message}`);
      return EXIT.usage;
    }
    if (error instanceof AppError) {
      console.error(`error: ${error.message}`);
      return EXIT.refused;
    }
    if (error instanceof RulesError) {
      console.error(error.message);
      return EXIT.environment;
    }
    if (error instanceof EnvironmentError) {
      console.error(`error: ${error.message}`);
      return EXIT.environment;
    }
    console.error(`error: ${(error as Error).message}`);
    return (error as { exitCode?: number }).exitCode ?? EXIT.environment;
  }
}

process.exitCode = await main(process.argv);
