// Leads, their tags, comments and payments.

export interface Lead {
  id: string;
  workspaceId: string;
  contactId: string;
  integrationId: string | null;
  /** Which interface created the lead. */
  origin: 'v1' | 'legacy';
  firstName: string;
  lastName: string | null;
  phone: string | null;
  email: string | null;
  notes: string | null;
  source: string | null;
  invitedBy: string | null;
  stageId: string | null;
  statusId: string | null;
  groupId: string | null;
  assignedTo: string | null;
  createdBy: string | null;
  closedBy: string | null;
  closedAt: string | null;
  closeOutcome: string | null;
  closeReason: string | null;
  extraData: Record<string, unknown> | null;
  createdAt: string;
  updatedAt: string;
  deletedAt: string | null;
}

/** The members of a lead that may change after it is created. */
export type LeadPatch = Partial<
  Omit<Lead, 'id' | 'workspaceId' | 'contactId' | 'integrationId' | 'origin' | 'createdAt'>
>;

export interface Comment {
  id: string;
  leadId: string;
  body: string;
  authorKind: 'integration' | 'employee' | 'system';
  authorRef: string | null;
  createdAt: string;
}

/** A condition on one custom field: the lead's value equals `value` (for multiple choice: holds each option). */
export type FieldCondition =
  | {
      fieldId: string;
      column: 'text_value' | 'decimal_value' | 'date_value' | 'datetime_value' | 'option_id';
      value: string;
    }
  | { fieldId: string; column: 'boolean_value'; value: boolean }
  | { fieldId: string; column: 'selected_options'; value: string[] };

export interface LeadFilter {
  workspaceId: string;
  stageId?: string | undefined;
  integrationId?: string | undefined;
  fields: FieldCondition[];
  /** Only leads created before this instant (the previous page's last created_at). */
  before?: string | undefined;
  limit: number;
}

/** A lead member a person-id template names: a column of the lead, or a path into its extra data. */
export type PersonIdMember =
  { column: 'id' | 'first_name' | 'last_name' | 'phone' | 'email' } | { extraData: string[] };

/**
 * A person-id template (an integration's `legacy.external_contact_id`, parsed by src/lead/external-id.ts):
 * its text around the members, one more than `members`. A lead's id is that text with each member's
 * value between, a string or a number as JavaScript writes it, trimmed as String.prototype.trim does;
 * a member without such a value (absent, empty, of another type) gives the lead no id at all.
 */
export interface PersonIdTemplate {
  literals: string[];
  members: PersonIdMember[];
}

export interface Payment {
  id: string;
  leadId: string;
  /** Hundredths of the currency unit, so sums are exact; a bigint, as amounts reach beyond 2^53. */
  amountMinor: bigint;
  note: string | null;
  createdAt: string;
}

export interface LeadRepo {
  get(id: string): Promise<Lead | null>;
  /**
   * Reads the lead and locks its row until the unit ends (PostgreSQL: SELECT ... FOR NO KEY UPDATE, which
   * answers the row as the last writer committed it). Taken by every unit that reads a lead or its
   * field values, decides, and writes (field writes, operator actions, a bot's actions on its leads):
   * such units on one lead run one after the other.
   */
  lock(id: string): Promise<Lead | null>;
  /**
   * The person's most recent lead that is not deleted, locked (`lock`), in one statement. The lead is answered as its
   * lock found it: deleted, when a unit that held the lock deleted it meanwhile (the caller looks
   * again). Null only when the person has no live lead: leads are marked deleted, never removed.
   */
  lockLatestOfContact(contactId: string): Promise<Lead | null>;
  insert(lead: Lead): Promise<void>;
  update(id: string, patch: LeadPatch): Promise<void>;
  addTags(leadId: string, tagIds: readonly string[]): Promise<void>;
  tagIds(leadId: string): Promise<string[]>;
  addComment(comment: Comment): Promise<void>;
  /**
   * Adds the comment only if the lead's comments, it included, stay within `caps` (a count and UTF-8
   * bytes of text); otherwise adds nothing. One write whose result the unit does not read, so on
   * PostgreSQL it is held back with the unit's other writes: no round trip of its own.
   */
  addCommentWithin(comment: Comment, caps: { count: number; bytes: number }): Promise<void>;
  commentsCount(leadId: string): Promise<number>;
  /** How many comments the lead has and the UTF-8 bytes of their text, summed: what its comment caps count. */
  commentTotals(leadId: string): Promise<{ count: number; bytes: number }>;
  countByStatus(statusId: string): Promise<number>;
  countByGroup(groupId: string): Promise<number>;
  /**
   * Legacy-created, not deleted leads of the integration, the oldest first; `unlinkedOnly`: whose person
   * has no binding to it (a mark the store's triggers keep, read by its own index); `limit`: the first
   * so many only.
   */
  listLegacy(integrationId: string, unlinkedOnly: boolean, limit?: number): Promise<Lead[]>;
  /** How many leads `listLegacy(integrationId, true)` answers, counted by the database up to `max`. */
  countUnlinkedLegacy(integrationId: string, max: number): Promise<number>;
  /**
   * The leads among the first `examined` of `listLegacy(integrationId, true)`, in its order, whose
   * person id by `template` is one of `externalIds`: the id made in the statement, so that only those
   * leads are read into the process, and no more than `examined` are looked at.
   */
  unlinkedLegacyOf(
    integrationId: string,
    template: PersonIdTemplate,
    externalIds: readonly string[],
    examined: number,
  ): Promise<Lead[]>;
  /** Leads of a workspace that are not deleted, newest first, filtered (operators "filter by them"). */
  list(filter: LeadFilter): Promise<Lead[]>;
  /** The lead's comments, oldest first; with `page`, only those from `offset` on, at most `limit`. */
  listComments(leadId: string, page: { offset: number; limit: number }): Promise<Comment[]>;
  addPayment(payment: Payment): Promise<void>;
  /** Total paid in hundredths, exact, and the last payment's time; zero and null when none. */
  payments(leadId: string): Promise<{ totalMinor: bigint; lastAt: string | null }>;
}
