// Records for the store tests: a plausible contact, lead, field value or key, changed by what a test cares about.
import type { Contact } from '../../src/store/repos/contacts.js';
import type { Lead } from '../../src/store/repos/leads.js';
import type { FieldValue } from '../../src/store/repos/field-values.js';
import type { ApiKey } from '../../src/store/repos/keys.js';
import type { NewSubmission } from '../../src/store/repos/submissions.js';

export const aContact = (id: string, over: Partial<Contact> = {}): Contact => ({
  id,
  workspaceId: 'ws-1',
  firstName: 'Ann',
  lastName: null,
  phone: null,
  email: null,
  createdAt: 't1',
  updatedAt: 't1',
  ...over,
});

/** A live lead of contact c1 through integration int-1, every optional member empty. */
export const aLead = (id: string, over: Partial<Lead> = {}): Lead => ({
  id,
  workspaceId: 'ws-1',
  contactId: 'c1',
  integrationId: 'int-1',
  origin: 'v1',
  firstName: 'Ann',
  lastName: null,
  phone: null,
  email: null,
  notes: null,
  source: null,
  invitedBy: null,
  stageId: null,
  statusId: null,
  groupId: null,
  assignedTo: null,
  createdBy: null,
  closedBy: null,
  closedAt: null,
  closeOutcome: null,
  closeReason: null,
  extraData: null,
  createdAt: 't1',
  updatedAt: 't1',
  deletedAt: null,
  ...over,
});

/** A live v1 key of int-1 whose hash is `hash-<id>`. */
/** A value of field `fieldId` on lead `leadId` an integration wrote, every typed member empty. */
export const aFieldValue = (leadId: string, fieldId: string, over: Partial<FieldValue> = {}): FieldValue => ({
  id: `${leadId}-${fieldId}`,
  leadId,
  fieldId,
  text: null,
  decimal: null,
  bool: null,
  date: null,
  datetime: null,
  optionId: null,
  optionIds: [],
  writtenBy: { kind: 'integration', ref: 'int-1' },
  updatedAt: 't',
  ...over,
});

export const aKey = (id: string, over: Partial<ApiKey> = {}): ApiKey => ({
  id,
  integrationId: 'int-1',
  kind: 'v1',
  prefix: 'lgw_ab',
  hash: `hash-${id}`,
  createdAt: '2026-11-22T00:00:00.000Z',
  createdBy: 'ops',
  revokedAt: null,
  ...over,
});

/** A v1 lead submission of int-1 with the given event_id, bound to nothing yet. */
export const aSubmission = (eventId: string): NewSubmission => ({
  id: `s-${eventId}`,
  integrationId: 'int-1',
  endpoint: 'leads',
  eventId,
  fingerprint: 'f',
  body: {},
  contactId: null,
  leadId: null,
  outcome: {},
  needsReview: false,
  reviewReason: null,
  createdAt: 't1',
});
