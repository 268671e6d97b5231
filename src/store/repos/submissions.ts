// Event records (one per integration, endpoint and event_id): the idempotency ledger.

import type { LeadViewParts } from './lead-views.js';
import type { Lead } from './leads.js';

/** A lead with what its lead object shows (`leadViews.withLead`). */
export interface LeadWithParts {
  lead: Lead;
  parts: LeadViewParts;
}

export type Endpoint = 'leads' | 'answers';

/** A recorded event as it is found: what a replay needs. The body it came with is read apart (`firstBody`). */
export interface Submission<Outcome = unknown> {
  id: string;
  integrationId: string;
  endpoint: Endpoint;
  eventId: string;
  fingerprint: string;
  contactId: string | null;
  leadId: string | null;
  outcome: Outcome;
  needsReview: boolean;
  reviewReason: string | null;
  createdAt: string;
}

/** A record to insert: the event with the body it came with. */
export interface NewSubmission extends Submission {
  body: unknown;
}

export interface SubmissionRepo {
  /** The recorded event, without its body: a replay compares fingerprints only. */
  find(integrationId: string, endpoint: Endpoint, eventId: string): Promise<Submission | null>;
  /**
   * The recorded event and, where the engine reads them in the same statement (PostgreSQL: one round
   * trip for a replay), its lead with the parts the lead object shows (`lead`: null for none);
   * `lead` is absent where the engine leaves them to a read of their own (SQLite).
   */
  findWithLead(
    integrationId: string,
    endpoint: Endpoint,
    eventId: string,
  ): Promise<(Submission & { lead?: LeadWithParts | null }) | null>;
  /** The body the event was first recorded with (null for none): read only to name a 409's differing paths. */
  firstBody(id: string): Promise<unknown>;
  /** Inserts the record; the uniqueness constraint, not process state, rejects a second one. */
  insert(submission: NewSubmission): Promise<void>;
  listNeedingReview(integrationId: string, limit: number): Promise<Submission[]>;
  /** Whether one of the integration's lead submissions created or joined this lead. */
  submittedTo(integrationId: string, leadId: string): Promise<boolean>;
}
