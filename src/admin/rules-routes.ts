// The admin API over rules and replicas: the rules this replica runs, a reload made by every live
// replica, and the live replicas with the rules each runs (src/rules/replicas.ts).
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { AppError } from '../errors.js';
import type { RulesHolder } from '../rules/loader.js';
import type { RulesAcrossReplicas } from '../rules/replicas.js';
import type { AuthFailureGuard } from '../rate-limit/auth-failures.js';
import type { Store } from '../store/store.js';
import { adminAuthenticator } from './authenticate.js';
import { ReplicasSchema, RulesInForceSchema, RulesReloadSchema } from './schemas.js';
import { reloadView, replicasView } from './views.js';

const meta = { tags: ['admin'], security: [{ adminBearer: [] }] };

export function rulesRoutes(deps: {
  store: Store;
  rules: RulesHolder;
  sharedRules: RulesAcrossReplicas;
  adminToken: string;
  adminTokenName: string;
  authFailures: AuthFailureGuard;
}) {
  return async function register(app: FastifyInstance): Promise<void> {
    const r = app.withTypeProvider<ZodTypeProvider>();
    r.addHook('onRequest', adminAuthenticator(deps));

    r.get(
      '/admin/v1/rules',
      {
        schema: {
          ...meta,
          summary:
            'The rules this replica runs: their version (a hash of the files), when they were loaded, and each file as it was read',
          description:
            'Each file of the rules folder as this replica read it at its last successful load: its name, the SHA-256 of its bytes and its text, what `lead-gateway rules diff` compares a folder with. Rules files hold no secrets (keys live in the database).',
          response: { 200: RulesInForceSchema },
        },
      },
      async () => {
        const { version, loadedAt } = deps.rules.version();
        const rules = deps.rules.current();
        const files = deps.rules.files().map((f) => ({ name: f.name, sha256: f.sha256, content: f.text }));
        return {
          rules_version: version,
          loaded_at: loadedAt,
          workspaces: rules.workspaces.size,
          integrations: rules.integrations.size,
          files,
        };
      },
    );

    r.post(
      '/admin/v1/rules/reload',
      {
        schema: {
          ...meta,
          summary: 'Reload the rules on every live replica, each from its own rules folder',
          description:
            'Every live replica reloads its own folder; the answer waits up to 5 s for each. 422 when any replica could not reload: that one keeps its previous rules, and the problem lists every replica (`replicas`) as the 200 does.',
          response: { 200: RulesReloadSchema },
          problems: ['validation-failed'],
        },
      },
      async () => {
        const report = await deps.sharedRules.reloadEverywhere();
        const view = reloadView(report);
        const failed = view.replicas.filter((x) => x.outcome === 'failed');
        if (failed.length > 0) {
          const problems = failed.flatMap((x) =>
            (x.last_reload_error?.problems ?? ['(no problem recorded)']).map((p) => `${x.id}: ${p}`),
          );
          throw new AppError(
            'validation-failed',
            `The rules were not reloaded on ${failed.length} of ${view.replicas.length} replicas (${failed.map((x) => x.id).join(', ')}); each of them keeps its previous rules. ${problems.join('; ')}`,
            { errors: problems.map((message) => ({ path: '', message })), ...view },
          );
        }
        return { reloaded: true as const, rules_version: deps.rules.version().version, ...view };
      },
    );

    r.get(
      '/admin/v1/replicas',
      {
        schema: {
          ...meta,
          summary: 'The live replicas on this database, the rules each runs, and whether they differ',
          response: { 200: ReplicasSchema },
        },
      },
      async () => replicasView(await deps.sharedRules.survey()),
    );
  };
}
