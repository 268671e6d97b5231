// Lead submission (docs/api.md, "Outcomes"): person matching, created/attached/reactivated, replay.
import type { Repos, Store } from '../store/store.js';
import type { Integration } from '../rules/catalog.js';
import type { LeadWithParts, Submission } from '../store/repos/submissions.js';
import { runOnce, type EventRecord, type FoundPerson } from '../idempotency/replay.js';
import { testMatchRecorder } from '../migration/test-matches.js';
import { answerFieldIds, applyAnswers, emptyAnswersResult, readKept } from '../answers/engine.js';
import type { Contact } from '../store/repos/contacts.js';
import type { Lead, LeadPatch } from '../store/repos/leads.js';
import type { FieldValue } from '../store/repos/field-values.js';
import type { LeadViewParts, OwnLeadParts } from '../store/repos/lead-views.js';
import { renderLead } from '../lead/view.js';
import { lockLatestLead } from '../lead/lock.js';
import { COMMENT_CAPS } from '../lead/comments.js';
import { normalizeEmail, normalizePhone, sameName, textOrNull } from './person.js';
import type { LeadSubmission, LeadSubmissionResponse } from './schemas.js';
import type { AnswersResult } from '../answers/schemas.js';
import { newId } from '../store/ids.js';

type MatchedBy = LeadSubmissionResponse['matched_by'];
type IntakeOutcome = LeadSubmissionResponse['intake_outcome'];

/** What is recorded the first time and returned, with the lead as it is now, on every replay. */
export interface LeadOutcomeRecord {
  contact_id: string;
  submission_id: string;
  lead_id: string;
  matched_existing: boolean;
  matched_by: MatchedBy;
  intake_outcome: IntakeOutcome;
  needs_review: boolean;
  reactivated: boolean;
  answers: AnswersResult;
}

export interface LeadSubmissionReply {
  status: 200 | 201;
  body: LeadSubmissionResponse;
}

export interface IntakeDeps {
  store: Store;
  now?: () => string;
}

export function submitLead(
  deps: IntakeDeps,
  integration: Integration,
  body: LeadSubmission,
  options: {
    origin?: Lead['origin'];
    inexactAnswers?: ReadonlySet<string>;
    /** A call with this test key (docs/api.md, "Test mode"): rehearsed, and the live person it found recorded. */
    testKeyId?: string | undefined;
    /** An earlier event this submission resends while `holds` says so (a legacy POST's previous day: `runOnce`). */
    earlier?: { eventId: string; holds: (createdAt: string) => boolean };
  } = {},
): Promise<LeadSubmissionReply> {
  const now = deps.now ?? (() => new Date().toISOString());
  const { earlier, testKeyId } = options;
  const rehearsal =
    testKeyId === undefined
      ? undefined
      : { found: testMatchRecorder(deps.store, integration, testKeyId, 'leads', body.event_id, now) };
  return runOnce(
    deps.store,
    {
      integrationId: integration.id,
      endpoint: 'leads',
      eventId: body.event_id,
      body,
      rehearsal,
      // As that event, the submission is the same but for its event_id.
      ...(earlier ? { earlier: { ...earlier, body: { ...body, event_id: earlier.eventId } } } : {}),
    },
    {
      replay: (r, submission, found) => replayLead(r, integration, submission, found),
      fresh: (tx) =>
        intake(tx, integration, body, now(), options.origin ?? 'v1', options.inexactAnswers, rehearsal !== undefined),
    },
  );
}

/**
 * The reply body; `known` is the lead as the caller has it (just written, or brought by the ledger's
 * look-up; null: there is none), saving a read of the row, with what it knows of its parts (a lead
 * created in the same unit has only its own), saving their reads. Read here when not given.
 */
async function respond(
  r: Repos,
  integration: Integration,
  record: LeadOutcomeRecord,
  replayed: boolean,
  known?: { lead: Lead; parts?: OwnLeadParts | LeadViewParts | undefined } | null,
) {
  const found = known !== undefined ? known : await r.leadViews.withLead(record.lead_id);
  const lead = found?.lead ?? null;
  const live = lead !== null && lead.deletedAt === null;
  const { lead_id: _leadId, ...outcome } = record;
  return {
    ...outcome,
    lead: live ? await renderLead(r, integration.workspace, lead, found?.parts) : null,
    deleted: !live,
    replayed,
  };
}

async function replayLead(
  r: Repos,
  integration: Integration,
  submission: Submission,
  found?: LeadWithParts | null,
): Promise<LeadSubmissionReply> {
  return { status: 200, body: await respond(r, integration, submission.outcome as LeadOutcomeRecord, true, found) };
}

interface Person {
  firstName: string;
  lastName: string | null;
  phone: string | null;
  email: string | null;
  externalId: string | null;
}

function reviewReason(contact: Contact | null, by: MatchedBy, p: Person): string | null {
  if (!contact) return null;
  if ((by === 'phone' || by === 'email') && !sameName(contact.firstName, p.firstName)) {
    return `matched by ${by}, but the first name "${p.firstName}" differs from the person's "${contact.firstName}"`;
  }
  if (by === 'external_contact_id' && p.phone !== null && contact.phone !== null && contact.phone !== p.phone) {
    return `external_contact_id points at a person whose phone ${contact.phone} differs from the submitted ${p.phone}`;
  }
  return null;
}

/**
 * A lead's extra_data grows by the metadata of each inquiry attached to it; this many bytes of JSON
 * text at most, or every reply carrying the lead would grow without end (120 attaches of 16 KB each
 * made replies of 1.65 MB).
 */
export const EXTRA_DATA_MAX_BYTES = 65_536;

const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value) ?? 'null', 'utf8');

/**
 * Metadata joins extra_data without overwriting what is there, member by member while the whole stays
 * within EXTRA_DATA_MAX_BYTES. A member that does not fit is not merged; it stays, with the rest of
 * the metadata, on the inquiry's own submission.
 */
function mergeExtra(
  existing: Record<string, unknown> | null,
  metadata: Record<string, unknown> | null,
): Record<string, unknown> | null {
  if (metadata === null) return existing;
  const entries = Object.entries(existing ?? {});
  const present = new Set(entries.map(([key]) => key));
  let bytes = jsonBytes(existing ?? {});
  for (const [key, value] of Object.entries(metadata)) {
    if (present.has(key)) continue;
    const added = jsonBytes(key) + 1 + jsonBytes(value) + (entries.length > 0 ? 1 : 0);
    if (bytes + added > EXTRA_DATA_MAX_BYTES) continue;
    entries.push([key, value]);
    bytes += added;
  }
  // fromEntries defines own members: a key named __proto__ stays data, whatever its source.
  return Object.fromEntries(entries);
}

async function intake(
  tx: Repos,
  integration: Integration,
  body: LeadSubmission,
  at: string,
  origin: Lead['origin'],
  inexactAnswers: ReadonlySet<string> | undefined,
  rehearsal: boolean,
): Promise<{ reply: () => Promise<LeadSubmissionReply>; record: EventRecord; found: FoundPerson | null }> {
  const person: Person = {
    firstName: body.first_name.trim(),
    lastName: textOrNull(body.last_name),
    phone: body.phone ? normalizePhone(body.phone) : null,
    email: body.email ? normalizeEmail(body.email) : null,
    externalId: body.external_contact_id ?? null,
  };
  // The kept counts of answers no field will take, read at once (no lock guards them: answers/keep.ts).
  const kept = body.answers ? readKept(tx, integration, body.answers, inexactAnswers) : undefined;
  // Match, then create or bind, as one step per person: the person's keys are locked first, so another
  // unit submitting the same person by any of them waits, and then finds the contact (and binding) this
  // one made. The person found is locked, then its latest lead, then the values its answers decide on
  // are read (the lock order: person keys, contact, lead). A person found by another key than another
  // unit's (phone here, e-mail there) is one row: its lock makes the two choose between creating and
  // attaching a lead one after the other. On PostgreSQL all of it is one statement (repos/holds.ts).
  const fieldIds = body.answers ? answerFieldIds(integration, body.answers) : [];
  const held = await tx.holds.person(integration.workspace.id, integration.id, person, fieldIds);
  const by: MatchedBy =
    held.found === null ? null : held.found.by === 'binding' ? 'external_contact_id' : held.found.by;
  const matched = held.found && (held.locked ?? held.found.contact);
  // A lead deleted while the unit waited for its lock: the next latest one, and its values read again.
  const again = held.latest !== null && held.latest.deletedAt !== null;
  const latest = again && held.found ? await lockLatestLead(tx, held.found.contact.id) : held.latest;
  const outcome: IntakeOutcome = latest === null ? 'created' : latest.closedAt === null ? 'attached' : 'reactivated';
  // A test call discloses nothing of a person its integration did not submit (docs/api.md, "Test
  // mode"): a lead another integration or an operator made is not joined but made anew from this call
  // alone, and a person not found by this integration's binding nor owning one of its leads is made
  // anew too (no name compared, no id shown). The outcome and matched_by stay the live call's; the
  // unit is undone either way, and the person found is recorded for the service team.
  const ownLead = latest !== null && latest.integrationId === integration.id;
  const own = by === 'external_contact_id' || ownLead;
  const joined = rehearsal && !ownLead ? null : latest;
  const found: FoundPerson | null =
    held.found && by ? { contactId: held.found.contact.id, leadId: latest?.id ?? null, matchedBy: by, own } : null;
  const values = again || joined === null ? undefined : held.values;
  // Rehearsed, the person's stored name and phone are compared only when the lead is this integration's.
  const reason = rehearsal && !ownLead ? null : reviewReason(matched, by, person);

  let contact = rehearsal && !own ? null : matched;
  if (contact === null) {
    const { externalId: _externalId, ...fields } = person;
    contact = { id: newId(), workspaceId: integration.workspace.id, ...fields, createdAt: at, updatedAt: at };
    await tx.contacts.insert(contact);
  } else {
    await tx.contacts.fillEmpty(contact.id, person, at);
  }
  if (person.externalId !== null && by !== 'external_contact_id') {
    // Under the binding's person lock nobody else can have bound it since the match found none; if
    // someone did, the submission fails loudly rather than losing the binding.
    await tx.contacts.bindNew(integration.id, person.externalId, contact.id, at);
  }

  const metadata = body.metadata ?? null;
  const sourceKey = typeof metadata?.source_key === 'string' ? metadata.source_key : null;
  const sourceRule = sourceKey === null ? undefined : integration.sources.find((rule) => rule.test(sourceKey));
  const notes = textOrNull(body.notes);

  let lead: Lead;
  if (joined === null) {
    lead = newLead(integration, contact.id, person, at, origin, {
      notes,
      source: sourceRule?.source ?? null,
      invitedBy: sourceRule?.invitedBy ?? null,
      extraData: metadata,
    });
    await tx.leads.insert(lead);
    await tx.leads.addTags(lead.id, integration.defaults.tagIds);
  } else {
    const patch: LeadPatch = {
      lastName: joined.lastName ?? person.lastName,
      phone: joined.phone ?? person.phone,
      email: joined.email ?? person.email,
      source: joined.source ?? sourceRule?.source ?? null,
      invitedBy: joined.source === null ? (sourceRule?.invitedBy ?? joined.invitedBy) : joined.invitedBy,
      extraData: mergeExtra(joined.extraData, metadata),
      updatedAt: at,
    };
    if (outcome === 'reactivated') {
      Object.assign(patch, {
        stageId: integration.defaults.stageId,
        closedAt: null,
        closedBy: null,
        closeOutcome: null,
        closeReason: null,
      });
    }
    await tx.leads.update(joined.id, patch);
    // A note past a comment cap is not added; the inquiry still joins the lead, and the note stays on
    // its submission, with the rest of the body it came with (as metadata past EXTRA_DATA_MAX_BYTES does).
    if (notes !== null) {
      await tx.leads.addCommentWithin(
        {
          id: newId(),
          leadId: joined.id,
          body: notes,
          authorKind: 'integration',
          authorRef: integration.id,
          createdAt: at,
        },
        COMMENT_CAPS,
      );
    }
    lead = { ...joined, ...patch };
  }

  const submissionId = newId();
  const created = outcome === 'created';
  const made = joined === null;
  const newLeadValues: FieldValue[] = [];
  const answers = body.answers
    ? await applyAnswers(
        tx,
        integration,
        { leadId: lead.id, submissionId, at, leadIsNew: made, newLeadValues, kept, ...(values ? { values } : {}) },
        body.answers,
        inexactAnswers,
      )
    : emptyAnswersResult();
  const record: LeadOutcomeRecord = {
    contact_id: contact.id,
    submission_id: submissionId,
    lead_id: lead.id,
    matched_existing: outcome !== 'created',
    matched_by: by,
    intake_outcome: outcome,
    needs_review: reason !== null,
    reactivated: outcome === 'reactivated',
    answers,
  };
  return {
    reply: async () => ({
      status: created ? 201 : 200,
      body: await respond(tx, integration, record, false, {
        lead,
        parts: made ? ownParts(integration, newLeadValues) : undefined,
      }),
    }),
    record: {
      id: submissionId,
      contactId: contact.id,
      leadId: lead.id,
      outcome: record,
      needsReview: reason !== null,
      reviewReason: reason,
      createdAt: at,
    },
    found,
  };
}

/**
 * A lead created in this unit has what the unit gave it and nothing else (no other unit sees it before
 * the commit): the values written, the default tags, no payment and no comment. Ordered as the store
 * reads them: values by field id, tags by id (byte order: the ids are ASCII).
 */
function ownParts(integration: Integration, values: FieldValue[]): OwnLeadParts {
  return {
    fieldValues: values.sort((a, b) => (a.fieldId < b.fieldId ? -1 : a.fieldId > b.fieldId ? 1 : 0)),
    payments: { totalMinor: 0n, lastAt: null },
    tagIds: [...new Set(integration.defaults.tagIds)].sort(),
    commentsCount: 0,
  };
}

function newLead(
  integration: Integration,
  contactId: string,
  p: Person,
  at: string,
  origin: Lead['origin'],
  extra: Pick<Lead, 'notes' | 'source' | 'invitedBy' | 'extraData'>,
): Lead {
  const d = integration.defaults;
  return {
    id: newId(),
    workspaceId: integration.workspace.id,
    contactId,
    integrationId: integration.id,
    origin,
    firstName: p.firstName,
    lastName: p.lastName,
    phone: p.phone,
    email: p.email,
    ...extra,
    stageId: d.stageId,
    statusId: d.statusId,
    groupId: d.groupId,
    assignedTo: d.assignedTo,
    createdBy: null,
    closedBy: null,
    closedAt: null,
    closeOutcome: null,
    closeReason: null,
    createdAt: at,
    updatedAt: at,
    deletedAt: null,
  };
}
