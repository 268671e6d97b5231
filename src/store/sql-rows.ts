// The rows of the SQL schema both engines share (src/store/sqlite/, src/store/postgres/), decoded
// (JSON parsed, flags as booleans), and the records made of them. An engine decodes what its driver
// hands over into these rows; the columns and their meaning are the same on both.
import type { AdminCredential } from './repos/admin-credentials.js';
import type { StoredAnswer, AnswerOutcome, UnmappedKey, UnmappedSummary } from './repos/answers.js';
import type { Contact } from './repos/contacts.js';
import type { FieldValue, WriterKind } from './repos/field-values.js';
import type { ApiKey, KeyKind, ListedKey } from './repos/keys.js';
import type { Lead, LeadPatch } from './repos/leads.js';
import type { LegacyTag } from './repos/legacy-tags.js';
import type { AuditEntry, MigrationState } from './repos/states.js';
import type { Endpoint, Submission } from './repos/submissions.js';
import type { TestMatchEntry } from './repos/test-matches.js';

export interface KeyRow {
  id: string;
  integration_id: string;
  kind: KeyKind;
  prefix: string;
  hash: string;
  created_at: string;
  created_by: string;
  revoked_at: string | null;
}

export const rowToListedKey = (r: KeyRow & { last_used_at: string | null }): ListedKey => ({
  ...rowToKey(r),
  lastUsedAt: r.last_used_at,
});

export const rowToKey = (r: KeyRow): ApiKey => ({
  id: r.id,
  integrationId: r.integration_id,
  kind: r.kind,
  prefix: r.prefix,
  hash: r.hash,
  createdAt: r.created_at,
  createdBy: r.created_by,
  revokedAt: r.revoked_at,
});

export interface AdminCredentialRow {
  id: string;
  name: string;
  prefix: string;
  hash: string;
  created_at: string;
  created_by: string;
  revoked_at: string | null;
}

export const rowToCredential = (r: AdminCredentialRow): AdminCredential => ({
  id: r.id,
  name: r.name,
  prefix: r.prefix,
  hash: r.hash,
  createdAt: r.created_at,
  createdBy: r.created_by,
  revokedAt: r.revoked_at,
});

export interface ContactRow {
  id: string;
  workspace_id: string;
  first_name: string;
  last_name: string | null;
  phone: string | null;
  email: string | null;
  created_at: string;
  updated_at: string;
}

export const rowToContact = (row: ContactRow): Contact => ({
  id: row.id,
  workspaceId: row.workspace_id,
  firstName: row.first_name,
  lastName: row.last_name,
  phone: row.phone,
  email: row.email,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export interface LegacyTagRow {
  workspace_id: string;
  id: string;
  name: string;
  color: string | null;
  created_at: string;
}

export const rowToTag = (r: LegacyTagRow): LegacyTag => ({
  workspaceId: r.workspace_id,
  id: r.id,
  name: r.name,
  color: r.color,
  createdAt: r.created_at,
});

export interface AuditRow {
  id: string;
  integration_id: string;
  action: string;
  from_state: MigrationState | null;
  to_state: MigrationState | null;
  actor: string;
  reason: string | null;
  details: Record<string, unknown> | null;
  at: string;
}

export const rowToAudit = (r: AuditRow): AuditEntry => ({
  id: r.id,
  integrationId: r.integration_id,
  action: r.action,
  fromState: r.from_state,
  toState: r.to_state,
  actor: r.actor,
  reason: r.reason,
  details: r.details,
  at: r.at,
});

export interface AnswerRow {
  id: string;
  submission_id: string;
  integration_id: string;
  lead_id: string;
  answer_key: string;
  raw_value: unknown;
  outcome: AnswerOutcome;
  error: string | null;
  field_id: string | null;
  created_at: string;
  applied_at: string | null;
  applied_outcome: AnswerOutcome | null;
}

export const rowToAnswer = (r: AnswerRow): StoredAnswer => ({
  id: r.id,
  submissionId: r.submission_id,
  integrationId: r.integration_id,
  leadId: r.lead_id,
  key: r.answer_key,
  raw: r.raw_value,
  outcome: r.outcome,
  error: r.error,
  fieldId: r.field_id,
  createdAt: r.created_at,
  appliedAt: r.applied_at,
  appliedOutcome: r.applied_outcome,
});

export interface FieldValueRow {
  id: string;
  lead_id: string;
  field_id: string;
  text_value: string | null;
  decimal_value: string | null;
  boolean_value: boolean | null;
  date_value: string | null;
  datetime_value: string | null;
  option_id: string | null;
  selected_options: string[] | null;
  written_by_kind: WriterKind;
  written_by_ref: string | null;
  updated_at: string;
}

export const rowToFieldValue = (r: FieldValueRow): FieldValue => ({
  id: r.id,
  leadId: r.lead_id,
  fieldId: r.field_id,
  text: r.text_value,
  decimal: r.decimal_value,
  bool: r.boolean_value,
  date: r.date_value,
  datetime: r.datetime_value,
  optionId: r.option_id,
  optionIds: r.selected_options ?? [],
  writtenBy: { kind: r.written_by_kind, ref: r.written_by_ref },
  updatedAt: r.updated_at,
});

/** The ledger's columns a found event is read with: all but the body, which only a 409 reads. */
export const SUBMISSION_COLUMNS =
  'id, integration_id, endpoint, event_id, fingerprint, contact_id, lead_id, outcome, needs_review, review_reason, created_at';

export interface SubmissionRow {
  id: string;
  integration_id: string;
  endpoint: Endpoint;
  event_id: string;
  fingerprint: string;
  contact_id: string | null;
  lead_id: string | null;
  outcome: unknown;
  needs_review: boolean;
  review_reason: string | null;
  created_at: string;
}

export const rowToSubmission = (r: SubmissionRow): Submission => ({
  id: r.id,
  integrationId: r.integration_id,
  endpoint: r.endpoint,
  eventId: r.event_id,
  fingerprint: r.fingerprint,
  contactId: r.contact_id,
  leadId: r.lead_id,
  outcome: r.outcome,
  needsReview: r.needs_review,
  reviewReason: r.review_reason,
  createdAt: r.created_at,
});

export interface LeadRow {
  id: string;
  workspace_id: string;
  contact_id: string;
  integration_id: string | null;
  origin: 'v1' | 'legacy';
  first_name: string;
  last_name: string | null;
  phone: string | null;
  email: string | null;
  notes: string | null;
  source: string | null;
  invited_by: string | null;
  stage_id: string | null;
  status_id: string | null;
  group_id: string | null;
  assigned_to: string | null;
  created_by: string | null;
  closed_by: string | null;
  closed_at: string | null;
  close_outcome: string | null;
  close_reason: string | null;
  extra_data: Record<string, unknown> | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

/** Domain member -> column, for every member a patch may carry. */
export const patchColumns: Record<keyof LeadPatch, keyof LeadRow> = {
  firstName: 'first_name',
  lastName: 'last_name',
  phone: 'phone',
  email: 'email',
  notes: 'notes',
  source: 'source',
  invitedBy: 'invited_by',
  stageId: 'stage_id',
  statusId: 'status_id',
  groupId: 'group_id',
  assignedTo: 'assigned_to',
  createdBy: 'created_by',
  closedBy: 'closed_by',
  closedAt: 'closed_at',
  closeOutcome: 'close_outcome',
  closeReason: 'close_reason',
  extraData: 'extra_data',
  updatedAt: 'updated_at',
  deletedAt: 'deleted_at',
};

export const rowToLead = (r: LeadRow): Lead => ({
  id: r.id,
  workspaceId: r.workspace_id,
  contactId: r.contact_id,
  integrationId: r.integration_id,
  origin: r.origin,
  firstName: r.first_name,
  lastName: r.last_name,
  phone: r.phone,
  email: r.email,
  notes: r.notes,
  source: r.source,
  invitedBy: r.invited_by,
  stageId: r.stage_id,
  statusId: r.status_id,
  groupId: r.group_id,
  assignedTo: r.assigned_to,
  createdBy: r.created_by,
  closedBy: r.closed_by,
  closedAt: r.closed_at,
  closeOutcome: r.close_outcome,
  closeReason: r.close_reason,
  extraData: r.extra_data,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  deletedAt: r.deleted_at,
});

/** A row of the unmapped-key summary: one key with one of its examples (null: none) and the total. */
export interface UnmappedKeyRow {
  answer_key: string;
  n: number;
  last_seen: string;
  raw_value: unknown;
  has_example: number | boolean;
  total_keys: number;
  scanned: number;
}

/** Folds the summary's rows (ordered by key, then example rank) into one entry per key. */
export function foldUnmappedKeys(rows: readonly UnmappedKeyRow[]): UnmappedSummary {
  const keys: UnmappedKey[] = [];
  for (const r of rows) {
    let entry = keys.at(-1);
    if (entry?.key !== r.answer_key)
      keys.push((entry = { key: r.answer_key, count: Number(r.n), lastSeen: r.last_seen, examples: [] }));
    if (r.has_example) entry.examples.push(r.raw_value);
  }
  return { keys, totalKeys: Number(rows[0]?.total_keys ?? 0), scanned: Number(rows[0]?.scanned ?? 0) };
}

export interface TestMatchRow {
  key_id: string;
  key_prefix: string | null;
  contact_id: string;
  lead_id: string | null;
  endpoint: string;
  event_id: string;
  matched_by: string;
  own: number | boolean;
  calls: number | string;
  first_at: string;
  last_at: string;
}

export const rowToTestMatch = (r: TestMatchRow): TestMatchEntry => ({
  keyId: r.key_id,
  keyPrefix: r.key_prefix,
  contactId: r.contact_id,
  leadId: r.lead_id,
  endpoint: r.endpoint as TestMatchEntry['endpoint'],
  eventId: r.event_id,
  matchedBy: r.matched_by as TestMatchEntry['matchedBy'],
  own: r.own === true || r.own === 1,
  calls: Number(r.calls),
  firstAt: r.first_at,
  lastAt: r.last_at,
});
