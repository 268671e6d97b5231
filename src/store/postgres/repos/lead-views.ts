// The lead object's parts in PostgreSQL: one statement, one round trip.
import type { LeadViewRepo } from '../../repos/lead-views.js';
import { rowToFieldValue, type FieldValueRow } from '../../sql-rows.js';
import { statement, type Sql } from '../sql.js';

type Row = { [K in keyof FieldValueRow]: FieldValueRow[K] | null } & {
  paid_total: string;
  paid_last: string | null;
  tag_ids: string[];
  comments_n: number;
  status_n: string | null;
  group_n: string | null;
};

/**
 * The lead's field values, one row each (or one row of NULLs when it has none), each row carrying the
 * lead's other parts: uncorrelated subqueries, computed once. The same statements' text as the
 * single reads of LeadRepo (payments, tags, comments, the trigger-kept counts).
 */
const parts = statement<Row>(
  'leadViews.parts',
  `SELECT v.*,
     (SELECT coalesce(sum(amount_minor), 0)::text FROM lead_payments WHERE lead_id = $1) AS paid_total,
     (SELECT max(created_at) FROM lead_payments WHERE lead_id = $1) AS paid_last,
     array(SELECT tag_id FROM lead_tags WHERE lead_id = $1 ORDER BY tag_id) AS tag_ids,
     (SELECT count(*)::int FROM lead_comments WHERE lead_id = $1) AS comments_n,
     (SELECT n FROM lead_counts WHERE kind = 'status' AND item_id = $2) AS status_n,
     (SELECT n FROM lead_counts WHERE kind = 'group' AND item_id = $3) AS group_n
   FROM (SELECT 1) AS one LEFT JOIN custom_field_values v ON v.lead_id = $1
   ORDER BY v.field_id`,
);

export function pgLeadViewRepo(sql: Sql): LeadViewRepo {
  return {
    parts: async (leadId, statusId, groupId) => {
      const rows = await parts.rows(sql, leadId, statusId, groupId);
      const first = rows[0]!;
      return {
        fieldValues: rows.filter((r) => r.id !== null).map((r) => rowToFieldValue(r as FieldValueRow)),
        payments: { totalMinor: BigInt(first.paid_total), lastAt: first.paid_last },
        tagIds: first.tag_ids,
        commentsCount: first.comments_n,
        statusCount: statusId === null ? 0 : Number(first.status_n ?? 0),
        groupCount: groupId === null ? 0 : Number(first.group_n ?? 0),
      };
    },
  };
}
