// What the lead object shows besides the lead's own row, read together (src/lead/view.ts).
import type { FieldValue } from './field-values.js';
import type { Lead } from './leads.js';

export interface LeadViewParts {
  /** The lead's custom field values, by field id. */
  fieldValues: FieldValue[];
  /** Total paid in hundredths, exact, and the last payment's time; zero and null when none. */
  payments: { totalMinor: bigint; lastAt: string | null };
  tagIds: string[];
  commentsCount: number;
  /** Leads counted under the status and the group asked for; 0 for null. */
  statusCount: number;
  groupCount: number;
}

/** What a lead created in the running unit has of its own: only the counts are not known without a read. */
export type OwnLeadParts = Omit<LeadViewParts, 'statusCount' | 'groupCount'>;

export interface LeadViewRepo {
  /** One read (PostgreSQL: one statement) of what `renderLead` shows of the lead `leadId`. */
  parts(leadId: string, statusId: string | null, groupId: string | null): Promise<LeadViewParts>;
  /** Leads counted under the status and the group asked for (0 for null), in one read. */
  counts(statusId: string | null, groupId: string | null): Promise<Pick<LeadViewParts, 'statusCount' | 'groupCount'>>;
  /** The lead and its parts (counted under its own status and group) in one read; null when there is no such lead. */
  withLead(leadId: string): Promise<{ lead: Lead; parts: LeadViewParts } | null>;
}
