// The CLI's API mode: each command is one admin API call (audit adds the integration list, for handles).
// The gateway answers the admin views themselves, so the CLI prints what it gets; the audit actor is
// the credential's operator, which the gateway decides (the CLI sends no actor).
import type { ScheduleView } from '../migration/schedule-view.js';
import type { BrownoutEntry, BrownoutPage } from '../migration/brownout-windows.js';
import type { MigrationReport } from '../migration/report.js';
import type { NotFoundPage, PortedFlagView } from '../migration/porting.js';
import type { TestMatchPage } from '../migration/test-matches.js';
import type { PortingGuide } from '../porting/guide.js';
import type { AdminClient } from './admin-client.js';
import { apiWebhooks } from './webhook-backend.js';
import type {
  AuditEntryView,
  Backend,
  IntegrationSummary,
  IssuedKey,
  KeySummary,
  LinkReportView,
  List,
  ListedKey,
  ReplicasView,
  StateView,
} from './backend.js';

export function apiBackend(client: AdminClient): Backend {
  const of = (ref: string) => `/integrations/${encodeURIComponent(ref)}`;
  // The body members of the admin API; an absent reason is left out rather than sent as null.
  const because = (reason: string | undefined) => (reason === undefined ? {} : { reason });

  return {
    integrations: () => client.get<List<IntegrationSummary>>('/integrations'),
    keys: (ref) => client.get<List<ListedKey>>(`${of(ref)}/keys`),
    importKey: (ref, input) =>
      client.post<KeySummary>(`${of(ref)}/keys/import`, { key: input.key, hash: input.hash, ...because(input.reason) }),
    issueKey: (ref, reason) => client.post<IssuedKey>(`${of(ref)}/keys`, because(reason)),
    issueTestKey: (ref, reason) => client.post<IssuedKey>(`${of(ref)}/keys/test`, because(reason)),
    link: (ref, reason) => client.post<LinkReportView>(`${of(ref)}/link`, because(reason)),
    revokeKey: (ref, keyId, reason) =>
      client.post<KeySummary>(`${of(ref)}/keys/${encodeURIComponent(keyId)}/revoke`, because(reason)),
    renew: (ref, reason) => client.post<IssuedKey>(`${of(ref)}/keys/renew`, because(reason)),
    switchOff: (ref, input) =>
      client.post<StateView>(`${of(ref)}/switch-off`, {
        reason: input.reason,
        force: input.force,
        quiet_period_hours: input.quietHours,
      }),
    rollback: (ref, reason) => client.post<StateView>(`${of(ref)}/rollback`, { reason }),
    scheduleSwitchOff: (ref, input) => client.put<ScheduleView>(`${of(ref)}/switch-off/schedule`, input),
    schedule: (ref) => client.get<ScheduleView>(`${of(ref)}/switch-off/schedule`),
    cancelSchedule: (ref) => client.delete<ScheduleView>(`${of(ref)}/switch-off/schedule`, undefined),
    addBrownout: (ref, input) => client.post<BrownoutEntry>(`${of(ref)}/brownouts`, input),
    brownouts: (ref, page) =>
      client.get<BrownoutPage>(`${of(ref)}/brownouts`, { limit: page.limit, after: page.after }),
    cancelBrownout: (ref, id) =>
      client.delete<BrownoutEntry>(`${of(ref)}/brownouts/${encodeURIComponent(id)}`, undefined),
    report: (ref, quietHours) => client.get<MigrationReport>(`${of(ref)}/report`, { quiet_period_hours: quietHours }),
    markPorted: (ref, note) => client.post<PortedFlagView>(`${of(ref)}/ported`, note === undefined ? {} : { note }),
    clearPorted: (ref, reason) => client.delete<{ ported: null }>(`${of(ref)}/ported`, because(reason)),
    notFound: (ref, page) => client.get<NotFoundPage>(`${of(ref)}/not-found`, { limit: page.limit, after: page.after }),
    testMatches: (ref, page) =>
      client.get<TestMatchPage>(`${of(ref)}/test-matches`, { limit: page.limit, after: page.after }),
    portingGuide: (ref) => client.get<PortingGuide>(`${of(ref)}/porting-guide`),
    async audit(ref, limit) {
      const list = await client.get<List<AuditEntryView>>(ref === undefined ? '/audit' : `${of(ref)}/audit`, { limit });
      const integrations = await client.get<List<IntegrationSummary>>('/integrations');
      return { list, handles: new Map(integrations.items.map((i) => [i.id, i.handle])) };
    },
    replicas: () => client.get<ReplicasView>('/replicas'),
    webhooks: apiWebhooks(client),
    close: async () => {},
  };
}
