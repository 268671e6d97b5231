// What the CLI's commands ask of their target, in the admin API's own shapes (src/admin/views.ts): the
// database (the services, then the views) or a running gateway (its admin API, which answers the views).
// Both answer the same objects, so every command prints the same table and the same --json either way.
import type { ScheduleInput } from '../migration/schedule.js';
import type { ScheduleView } from '../migration/schedule-view.js';
import type { BrownoutEntry, BrownoutInput, BrownoutPage } from '../migration/brownout-windows.js';
import type { z } from 'zod';
import type {
  AuditEntrySchema,
  IntegrationSummarySchema,
  IssuedKeySchema,
  KeySummarySchema,
  LinkReportSchema,
  ListedKeySchema,
  ReplicasSchema,
  StateSchema,
} from '../admin/schemas.js';
import type { MigrationReport } from '../migration/report.js';
import type { NotFoundPage, PortedFlagView } from '../migration/porting.js';
import type { TestMatchPage } from '../migration/test-matches.js';
import type { PortingGuide } from '../porting/guide.js';
import type { WebhookBackend } from './webhook-backend.js';

export type IntegrationSummary = z.infer<typeof IntegrationSummarySchema>;
export type KeySummary = z.infer<typeof KeySummarySchema>;
export type ListedKey = z.infer<typeof ListedKeySchema>;
export type IssuedKey = z.infer<typeof IssuedKeySchema>;
export type LinkReportView = z.infer<typeof LinkReportSchema>;
export type StateView = z.infer<typeof StateSchema>;
export type AuditEntryView = z.infer<typeof AuditEntrySchema>;
export type List<T> = { items: T[] };
export type ReplicasView = z.infer<typeof ReplicasSchema>;

export interface Backend {
  integrations(): Promise<List<IntegrationSummary>>;
  keys(ref: string): Promise<List<ListedKey>>;
  importKey(ref: string, input: { key?: string; hash?: string; reason?: string }): Promise<KeySummary>;
  issueKey(ref: string, reason?: string): Promise<IssuedKey>;
  issueTestKey(ref: string, reason?: string): Promise<IssuedKey>;
  link(ref: string, reason?: string): Promise<LinkReportView>;
  revokeKey(ref: string, keyId: string, reason?: string): Promise<KeySummary>;
  renew(ref: string, reason?: string): Promise<IssuedKey>;
  switchOff(ref: string, input: { reason: string; force: boolean; quietHours?: number }): Promise<StateView>;
  rollback(ref: string, reason: string): Promise<StateView>;
  /** Schedules (or replaces) the integration's switch-off (src/migration/schedule.ts). */
  scheduleSwitchOff(ref: string, input: ScheduleInput): Promise<ScheduleView>;
  /** The integration's schedule, pending or how it ended; a refusal (404) when it never had one. */
  schedule(ref: string): Promise<ScheduleView>;
  cancelSchedule(ref: string): Promise<ScheduleView>;
  /** Adds a brownout window (src/migration/brownout-windows.ts). */
  addBrownout(ref: string, input: BrownoutInput): Promise<BrownoutEntry>;
  /** The integration's brownout windows, the rules' and the stored ones, a page at a time. */
  brownouts(ref: string, page: { limit?: number; after?: string }): Promise<BrownoutPage>;
  cancelBrownout(ref: string, id: string): Promise<BrownoutEntry>;
  report(ref: string, quietHours?: number): Promise<MigrationReport>;
  markPorted(ref: string, note?: string): Promise<PortedFlagView>;
  clearPorted(ref: string, reason?: string): Promise<{ ported: null }>;
  notFound(ref: string, page: { limit?: number; after?: string }): Promise<NotFoundPage>;
  /** The live persons the integration's test calls found (docs/api.md, "Test mode"). */
  testMatches(ref: string, page: { limit?: number; after?: string }): Promise<TestMatchPage>;
  /** The integration's porting guide (src/porting/). */
  portingGuide(ref: string): Promise<PortingGuide>;
  /** The entries, and the handle of each integration they name (an id the rules no longer know stays an id). */
  audit(ref: string | undefined, limit: number): Promise<{ list: List<AuditEntryView>; handles: Map<string, string> }>;
  /** The live gateway processes on the database and the rules each runs (PostgreSQL). */
  replicas(): Promise<ReplicasView>;
  /** The webhook endpoints (docs/webhooks.md). */
  webhooks: WebhookBackend;
  close(): Promise<void>;
}
