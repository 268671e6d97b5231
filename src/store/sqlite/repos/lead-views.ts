// The lead object's parts in SQLite. No round trips to save here, but each statement is a call into
// the library with its own prepare-step-reset: the payments, tags, comments and the two counts are
// read in one statement (a replay's render went from 8 statements to 3).
import type { Db } from '../connection.js';
import type { LeadViewRepo } from '../../repos/lead-views.js';
import type { FieldValueRepo } from '../../repos/field-values.js';
import type { LeadRepo } from '../../repos/leads.js';

interface PartsRow {
  high: bigint;
  mid: bigint;
  low: bigint;
  last: string | null;
  tag_ids: string;
  comments_n: bigint;
  status_n: bigint | null;
  group_n: bigint | null;
}

export function sqliteLeadViewRepo(db: Db, leads: LeadRepo, fieldValues: FieldValueRepo): LeadViewRepo {
  // The payment sums in three slices, as in leads.ts (no slice sum can overflow 64 bits), read as
  // bigints; the counts are kept by triggers (migration 6), point reads.
  const partsOf = db
    .prepare<{ lead: string; status: string | null; group: string | null }, PartsRow>(
      `SELECT
         (SELECT coalesce(sum(amount_minor / 1000000000000), 0) FROM lead_payments WHERE lead_id = @lead) AS high,
         (SELECT coalesce(sum(amount_minor / 1000000 % 1000000), 0) FROM lead_payments WHERE lead_id = @lead) AS mid,
         (SELECT coalesce(sum(amount_minor % 1000000), 0) FROM lead_payments WHERE lead_id = @lead) AS low,
         (SELECT max(created_at) FROM lead_payments WHERE lead_id = @lead) AS last,
         (SELECT json_group_array(tag_id ORDER BY tag_id) FROM lead_tags WHERE lead_id = @lead) AS tag_ids,
         (SELECT count(*) FROM lead_comments WHERE lead_id = @lead) AS comments_n,
         (SELECT n FROM lead_counts WHERE kind = 'status' AND item_id = @status) AS status_n,
         (SELECT n FROM lead_counts WHERE kind = 'group' AND item_id = @group) AS group_n`,
    )
    .safeIntegers(true);
  const parts: LeadViewRepo['parts'] = async (leadId, statusId, groupId) => {
    const row = partsOf.get({ lead: leadId, status: statusId, group: groupId })!;
    return {
      fieldValues: await fieldValues.listForLead(leadId),
      payments: { totalMinor: row.high * 10n ** 12n + row.mid * 10n ** 6n + row.low, lastAt: row.last },
      tagIds: JSON.parse(row.tag_ids) as string[],
      commentsCount: Number(row.comments_n),
      statusCount: statusId === null || row.status_n === null ? 0 : Number(row.status_n),
      groupCount: groupId === null || row.group_n === null ? 0 : Number(row.group_n),
    };
  };
  return {
    parts,
    withLead: async (leadId) => {
      const lead = await leads.get(leadId);
      return lead && { lead, parts: await parts(lead.id, lead.statusId, lead.groupId) };
    },
  };
}
