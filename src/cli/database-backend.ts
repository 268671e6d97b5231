// The CLI's database mode: the admin API's service functions on the gateway's own database, answered
// through the same view functions the admin routes answer with.
import { AppError } from '../errors.js';
import { cancelScheduledSwitchOff, scheduleSwitchOff, scheduleView } from '../migration/schedule.js';
import { addBrownout, BROWNOUTS_PAGE_DEFAULT, cancelBrownout, listBrownouts } from '../migration/brownout-windows.js';
import { integrationByRef } from '../admin/integration-ref.js';
import {
  auditView,
  integrationViews,
  issuedKeyView,
  keyView,
  linkView,
  listedKeyView,
  listOf,
  replicasView,
  stateView,
} from '../admin/views.js';
import { listReplicas } from '../rules/replicas.js';
import {
  importLegacyKey,
  issueTestKey,
  issueV1Key,
  relinkLegacyLeads,
  renewKeys,
  revokeKey,
  rollback,
  switchOff,
} from '../migration/service.js';
import { migrationReport } from '../migration/report.js';
import { clearPorted, markPorted, NOT_FOUND_PAGE_DEFAULT, notFoundAnswers, portedView } from '../migration/porting.js';
import { TEST_MATCHES_PAGE_DEFAULT, testMatches } from '../migration/test-matches.js';
import { portingGuide } from '../porting/service.js';
import { createUsageRecorder, type UsageRecorder } from '../migration/usage.js';
import { createRulesHolder, type RulesHolder } from '../rules/loader.js';
import { openStore, storeLocation, type StoreOptions } from '../store/open-store.js';
import { StoreOpenError, type Store } from '../store/store.js';
import type { Backend } from './backend.js';
import { EXIT, EnvironmentError, UsageError } from './exit.js';
import { databaseWebhooks } from './webhook-backend.js';

export interface Context {
  rules: RulesHolder;
  store: Store;
  usage: UsageRecorder;
  location: string;
  close(): Promise<void>;
}

/** Opens the rules and the store; an unusable database is one line with exit 3. */
export async function openDatabase(options: StoreOptions, rulesDir: string): Promise<Context> {
  let rules: RulesHolder;
  let store: Store;
  try {
    rules = createRulesHolder(rulesDir);
    store = await openStore(options);
  } catch (error) {
    if (error instanceof StoreOpenError) {
      const hint =
        error.problem === 'no such file'
          ? ' (the gateway creates it on its first start; pass --create to make an empty one here)'
          : '';
      const setting = options.engine === 'postgres' ? '--database-url / DATABASE_URL' : '--database / DATABASE_PATH';
      throw new EnvironmentError(`${setting}: ${error.message}${hint}.`);
    }
    (error as Error & { exitCode?: number }).exitCode = EXIT.environment;
    throw error;
  }
  const usage = createUsageRecorder(store);
  return {
    rules,
    store,
    usage,
    location: `database: ${storeLocation(options)}`,
    async close() {
      await usage.close();
      await store.close();
    },
  };
}

/**
 * The commands on the database. `actor` is the audit name of every change: the account that runs the
 * CLI, which is what holds the credential here (access to the database).
 */
export function databaseBackend(
  ctx: Context,
  actor: string,
  allowHttpHosts: () => readonly string[] = () => [],
): Backend {
  const { rules, store, usage } = ctx;
  const deps = { store, usage };
  const find = (ref: string) => integrationByRef(rules, ref);
  const who = (reason: string | undefined) => ({ actor, reason: reason ?? null });

  return {
    async integrations() {
      return integrationViews(store, [...rules.current().integrations.values()]);
    },
    async keys(ref) {
      const integration = find(ref);
      return listOf((await store.snapshot((r) => r.keys.listForIntegration(integration.id))).map(listedKeyView));
    },
    async importKey(ref, input) {
      return keyView(
        await importLegacyKey(deps, find(ref), { key: input.key, hash: input.hash, ...who(input.reason) }),
      );
    },
    async issueKey(ref, reason) {
      const r = await issueV1Key(deps, find(ref), who(reason));
      return issuedKeyView(r, r.state, linkView(r.links));
    },
    async issueTestKey(ref, reason) {
      const r = await issueTestKey(deps, find(ref), who(reason));
      return issuedKeyView(r, r.state);
    },
    async link(ref, reason) {
      return linkView(await relinkLegacyLeads(deps, find(ref), who(reason)));
    },
    async revokeKey(ref, keyId, reason) {
      return keyView(await revokeKey(deps, find(ref), keyId, who(reason)));
    },
    async renew(ref, reason) {
      const r = await renewKeys(deps, find(ref), who(reason));
      return issuedKeyView(r, r.state, { revoked_keys: r.revoked });
    },
    async switchOff(ref, input) {
      const integration = find(ref);
      const state = await switchOff(deps, integration, {
        actor,
        reason: input.reason,
        force: input.force,
        quietPeriodHours: input.quietHours,
      });
      return stateView(integration, state);
    },
    async rollback(ref, reason) {
      const integration = find(ref);
      return stateView(integration, await rollback(deps, integration, { actor, reason }));
    },
    scheduleSwitchOff: (ref, input) => scheduleSwitchOff(deps, find(ref), { ...input, actor }),
    async schedule(ref) {
      const integration = find(ref);
      const schedule = await deps.store.readOne((r) => r.schedules.get(integration.id));
      if (!schedule) throw new AppError('not-found', `${integration.handle} has no scheduled switch-off.`);
      return scheduleView(schedule);
    },
    cancelSchedule: (ref) => cancelScheduledSwitchOff(deps, find(ref), { actor }),
    addBrownout: (ref, input) => addBrownout(deps, find(ref), { ...input, actor }),
    brownouts: (ref, page) =>
      listBrownouts(deps, find(ref), { limit: page.limit ?? BROWNOUTS_PAGE_DEFAULT, after: page.after }),
    cancelBrownout: (ref, id) => cancelBrownout(deps, find(ref), id, { actor }),
    report: (ref, quietHours) => migrationReport(deps, find(ref), quietHours),
    async markPorted(ref, note) {
      return portedView(await markPorted(deps, find(ref), { actor, note: note ?? null, role: 'service_team' }))!;
    },
    async clearPorted(ref, reason) {
      await clearPorted(deps, find(ref), { ...who(reason), role: 'service_team' });
      return { ported: null };
    },
    notFound: (ref, page) =>
      notFoundAnswers(deps, find(ref), { limit: page.limit ?? NOT_FOUND_PAGE_DEFAULT, after: page.after }),
    testMatches: (ref, page) =>
      testMatches(deps, find(ref), { limit: page.limit ?? TEST_MATCHES_PAGE_DEFAULT, after: page.after }),
    portingGuide: (ref) => portingGuide(deps, find(ref)),
    async audit(ref, limit) {
      const id = ref === undefined ? null : find(ref).id;
      const entries = await store.snapshot((r) => r.states.listAudit(id, limit));
      const handles = new Map([...rules.current().integrations.values()].map((i) => [i.id, i.handle]));
      return { list: listOf(entries.map(auditView)), handles };
    },
    async replicas() {
      // A gateway on a SQLite file is the only process serving it, and records itself nowhere.
      if (store.engine === 'sqlite')
        throw new UsageError('replicas: a gateway on a SQLite file records no replicas; ask it with --url');
      const survey = await listReplicas(store.replicas);
      // This command's own process runs no rules: it is left out.
      return replicasView({ ...survey, replicas: survey.replicas.filter((r) => r.id !== survey.self) });
    },
    webhooks: databaseWebhooks(ctx, actor, allowHttpHosts),
    close: () => ctx.close(),
  };
}
