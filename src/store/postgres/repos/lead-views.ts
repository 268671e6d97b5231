// The lead object's parts in PostgreSQL: one statement, one round trip.
import type { LeadViewParts, LeadViewRepo } from '../../repos/lead-views.js';
import type { Lead } from '../../repos/leads.js';
import { rowToFieldValue, rowToLead, type FieldValueRow, type LeadRow } from '../../sql-rows.js';
import { statement, type Sql } from '../sql.js';

type PartsRow = { [K in keyof FieldValueRow]: FieldValueRow[K] | null } & {
  paid_total: string;
  paid_last: string | null;
  tag_ids: string[];
  comments_n: number;
  status_n: string | null;
  group_n: string | null;
};

/**
 * The lead's parts, as columns beside each of its field values: subqueries on the lead id (`lead`,
 * a parameter or a column) are computed once; the counts are the trigger-kept rows of the status and
 * the group named by `status` and `group`. The same reads as LeadRepo's payments, tagIds,
 * commentsCount and counts.
 */
const countColumns = (status: string, group: string) =>
  `(SELECT sum(n) FROM lead_counts WHERE kind = 'status' AND item_id = ${status}) AS status_n,
     (SELECT sum(n) FROM lead_counts WHERE kind = 'group' AND item_id = ${group}) AS group_n`;
const leadPartsColumns = (status: string, group: string, lead: string) => `
     (SELECT coalesce(sum(amount_minor), 0)::text FROM lead_payments WHERE lead_id = ${lead}) AS paid_total,
     (SELECT max(created_at) FROM lead_payments WHERE lead_id = ${lead}) AS paid_last,
     array(SELECT tag_id FROM lead_tags WHERE lead_id = ${lead} ORDER BY tag_id) AS tag_ids,
     (SELECT count(*)::int FROM lead_comments WHERE lead_id = ${lead}) AS comments_n,
     ${countColumns(status, group)}`;
const partsColumns = (status: string, group: string, lead = '$1') => `v.*, ${leadPartsColumns(status, group, lead)}`;

/**
 * The lead whose id is the column `leadId` of the one row `from` gives, with its parts, a row per
 * field value (`leadWithPartsOf` reads them back): for a statement that finds the lead's id itself
 * (the ledger's replay, repos/submissions.ts). Its subqueries name a column, not a parameter, so they
 * would run again for every field value; the one row with the parts is made first (OFFSET 0 keeps it
 * a subquery of its own) and only then joined to the field values.
 */
export const leadWithPartsSql = (columns: string, from: string, leadId: string) =>
  `SELECT one.*, v.* FROM (
     SELECT ${columns}, to_jsonb(l) AS lead_row, l.id AS parts_lead_id, ${leadPartsColumns('l.status_id', 'l.group_id', leadId)}
     FROM ${from} LEFT JOIN leads l ON l.id = ${leadId} OFFSET 0
   ) AS one LEFT JOIN custom_field_values v ON v.lead_id = one.parts_lead_id ORDER BY v.field_id`;

// One row of NULLs for v.* when the lead has no field values.
const parts = statement<PartsRow>(
  'leadViews.parts',
  `SELECT ${partsColumns('$2', '$3')} FROM (SELECT 1) AS one LEFT JOIN custom_field_values v ON v.lead_id = $1 ORDER BY v.field_id`,
);
const counts = statement<{ status_n: string | null; group_n: string | null }>(
  'leadViews.counts',
  `SELECT ${countColumns('$1', '$2')}`,
);
// The lead's row as JSON: its columns would collide with the field values' (id, lead_id, updated_at).
const withLead = statement<PartsRow & { lead_row: LeadRow }>(
  'leadViews.withLead',
  `SELECT to_jsonb(l) AS lead_row, ${partsColumns('l.status_id', 'l.group_id')}
   FROM leads l LEFT JOIN custom_field_values v ON v.lead_id = l.id WHERE l.id = $1 ORDER BY v.field_id`,
);

const partsOf = (rows: PartsRow[], statusId: string | null, groupId: string | null): LeadViewParts => {
  const first = rows[0]!;
  return {
    fieldValues: rows.filter((r) => r.id !== null).map((r) => rowToFieldValue(r as FieldValueRow)),
    payments: { totalMinor: BigInt(first.paid_total), lastAt: first.paid_last },
    tagIds: first.tag_ids,
    commentsCount: first.comments_n,
    statusCount: statusId === null ? 0 : Number(first.status_n ?? 0),
    groupCount: groupId === null ? 0 : Number(first.group_n ?? 0),
  };
};

/** The lead and its parts from the rows of a `leadWithPartsSql` statement; null when it found no lead. */
export const leadWithPartsOf = (
  rows: (PartsRow & { lead_row: LeadRow | null })[],
): { lead: Lead; parts: LeadViewParts } | null => {
  if (rows.length === 0 || rows[0]!.lead_row === null) return null;
  const lead = rowToLead(rows[0]!.lead_row);
  return { lead, parts: partsOf(rows, lead.statusId, lead.groupId) };
};

export type LeadWithPartsRow = PartsRow & { lead_row: LeadRow | null };

export function pgLeadViewRepo(sql: Sql): LeadViewRepo {
  return {
    parts: async (leadId, statusId, groupId) =>
      partsOf(await parts.rows(sql, leadId, statusId, groupId), statusId, groupId),
    counts: async (statusId, groupId) => {
      if (statusId === null && groupId === null) return { statusCount: 0, groupCount: 0 };
      const row = (await counts.one(sql, statusId, groupId))!;
      return {
        statusCount: statusId === null ? 0 : Number(row.status_n ?? 0),
        groupCount: groupId === null ? 0 : Number(row.group_n ?? 0),
      };
    },
    withLead: async (leadId) => leadWithPartsOf(await withLead.rows(sql, leadId)),
  };
}
