// The admin API's objects, built in one place: the admin routes answer them and the CLI prints them
// with --json, so a script sees the same members, in snake_case, whichever it calls.
import type { z } from 'zod';
import type { ApiKey, ListedKey } from '../store/repos/keys.js';
import type { IssuedKey } from '../migration/keys.js';
import type { LinkReport } from '../migration/service.js';
import type { AuditEntry, MigrationState, PortedFlag } from '../store/repos/states.js';
import { portedView } from '../migration/porting.js';
import type { Integration } from '../rules/catalog.js';
import type { Store } from '../store/store.js';
import type { ReplicaRecord } from '../store/replicas.js';
import type { ReloadReport, Survey } from '../rules/replicas.js';
import type {
  AuditEntrySchema,
  IntegrationSummarySchema,
  IssuedKeySchema,
  KeySummarySchema,
  ListedKeySchema,
  LinkReportSchema,
  ReplicaReloadSchema,
  ReplicaSchema,
  ReplicasSchema,
  StateSchema,
} from './schemas.js';

/** Every list the admin API answers and the CLI prints is `{ "items": [...] }` (docs/api.md, Conventions). */
export const listOf = <T>(items: T[]): { items: T[] } => ({ items });

export const integrationView = (
  i: Integration,
  state: MigrationState,
  ported: PortedFlag | null,
): z.infer<typeof IntegrationSummarySchema> => ({
  id: i.id,
  handle: i.handle,
  name: i.name,
  workspace: { id: i.workspace.id, slug: i.workspace.slug, name: i.workspace.name },
  state,
  ported: portedView(ported),
});

/** Every integration with its state and ported flag, in one read. */
export async function integrationViews(
  store: Store,
  list: Integration[],
): Promise<{ items: z.infer<typeof IntegrationSummarySchema>[] }> {
  const { states, flags } = await store.snapshot(async (r) => ({
    states: await Promise.all(list.map((i) => r.states.get(i.id))),
    flags: await r.states.allPorted(),
  }));
  const byId = new Map(flags.map((f) => [f.integrationId, f]));
  return listOf(list.map((i, n) => integrationView(i, states[n]!, byId.get(i.id) ?? null)));
}

export const stateView = (i: Integration, state: MigrationState): z.infer<typeof StateSchema> => ({
  integration_id: i.id,
  handle: i.handle,
  state,
});

export const keyView = (k: ApiKey): z.infer<typeof KeySummarySchema> => ({
  id: k.id,
  kind: k.kind,
  prefix: k.prefix,
  created_at: k.createdAt,
  created_by: k.createdBy,
  revoked_at: k.revokedAt,
});

export const listedKeyView = (k: ListedKey): z.infer<typeof ListedKeySchema> => ({
  ...keyView(k),
  last_used_at: k.lastUsedAt,
});

export const linkView = (links: LinkReport): z.infer<typeof LinkReportSchema> => ({
  linked_leads: links.linked,
  unlinked_leads: links.unlinked,
  unlinked_leads_total: links.unlinkedTotal,
  unlinked_by_code: links.unlinkedByCode,
});

/** A key just issued: the secret is in it, shown this once. */
export const issuedKeyView = (
  { key, secret }: IssuedKey,
  state: MigrationState,
  extra: Partial<z.infer<typeof IssuedKeySchema>> = {},
): z.infer<typeof IssuedKeySchema> => ({
  id: key.id,
  integration_id: key.integrationId,
  kind: key.kind,
  prefix: key.prefix,
  key: secret,
  created_at: key.createdAt,
  state,
  ...extra,
});

export const auditView = (e: AuditEntry): z.infer<typeof AuditEntrySchema> => ({
  id: e.id,
  integration_id: e.integrationId,
  action: e.action,
  from_state: e.fromState,
  to_state: e.toState,
  actor: e.actor,
  reason: e.reason,
  details: e.details,
  at: e.at,
});

/** A live replica as GET /admin/v1/replicas lists it; `self` is the replica answering. */
export const replicaView = (r: ReplicaRecord, self: string): z.infer<typeof ReplicaSchema> => ({
  id: r.id,
  host: r.host,
  pid: r.pid,
  started_at: r.startedAt,
  last_heartbeat_at: r.heartbeatAt,
  rules_version: r.rules?.version ?? null,
  rules_loaded_at: r.rules?.loadedAt ?? null,
  last_reload_error: r.rules?.reloadError ?? null,
  this_replica: r.id === self,
});

export const replicasView = (s: Survey): z.infer<typeof ReplicasSchema> => ({
  items: s.replicas.map((r) => replicaView(r, s.self)),
  rules_versions: s.versions,
  drift: s.drift,
});

/** The replicas asked to reload (those that run rules), each with what it answered. */
export const reloadView = (
  report: ReloadReport,
): {
  replicas: z.infer<typeof ReplicaReloadSchema>[];
  not_answered: string[];
  rules_versions: string[];
  drift: boolean;
} => {
  const replicas = report.replicas
    .filter((r) => report.outcomes.has(r.id))
    .map((r) => ({ ...replicaView(r, report.self), outcome: report.outcomes.get(r.id)! }));
  return {
    replicas,
    not_answered: replicas.filter((r) => r.outcome === 'no-answer').map((r) => r.id),
    rules_versions: report.versions,
    drift: report.drift,
  };
};
