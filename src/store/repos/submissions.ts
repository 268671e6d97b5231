// Event records (one per integration, endpoint and event_id): the idempotency ledger.

export type Endpoint = 'leads' | 'answers';

export interface Submission<Outcome = unknown> {
  id: string;
  integrationId: string;
  endpoint: Endpoint;
  eventId: string;
  fingerprint: string;
  body: unknown;
  contactId: string | null;
  leadId: string | null;
  outcome: Outcome;
  needsReview: boolean;
  reviewReason: string | null;
  createdAt: string;
}

export interface SubmissionRepo {
  find(integrationId: string, endpoint: Endpoint, eventId: string): Promise<Submission | null>;
  /** Inserts the record; the uniqueness constraint, not process state, rejects a second one. */
  insert(submission: Submission): Promise<void>;
  listNeedingReview(integrationId: string, limit: number): Promise<Submission[]>;
  /** Whether one of the integration's lead submissions created or joined this lead. */
  submittedTo(integrationId: string, leadId: string): Promise<boolean>;
}
