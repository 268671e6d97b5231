// Leads, their tags, comments and payments in PostgreSQL: the shared statements
// (src/store/statements/leads.ts), the locks, the tags added as one array, the comment caps and
// totals, the counts and sums, the legacy lists and the statements generated per shape.
import { createHash } from 'node:crypto';
import type { Comment, LeadFilter, LeadPatch, LeadRepo } from '../../repos/leads.js';
import { patchColumns, rowToLead, type LeadRow } from '../../sql-rows.js';
import { leadStatements as shared } from '../../statements/leads.js';
import { rowName, sharedStatement, statement, writeLater, type Sql } from '../sql.js';
import { UNLINKED_LEGACY, unlinkedLegacyOfQuery } from './person-id.js';

const toColumnValue = (key: keyof LeadPatch, value: unknown): unknown =>
  key === 'extraData' ? (value === null ? null : JSON.stringify(value)) : value;

/** A statement name for generated SQL: PostgreSQL keeps 63 bytes of a name, so long texts are named by their hash. */
const nameOf = (prefix: string, text: string) =>
  `${prefix}.${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;

// Ties of created_at break by id: time-ordered (src/store/ids.ts), as SQLite's rowid is.
const get = sharedStatement<LeadRow>(shared.get);
const lock = statement<LeadRow>('leads.lock', 'SELECT * FROM leads WHERE id = $1 FOR NO KEY UPDATE');
// The lock is taken on the lead the subquery found; a row a waited-for unit changed is answered in its
// committed version (READ COMMITTED re-checks `id =` on it), deleted or not.
const lockLatest = statement<LeadRow>(
  'leads.lockLatest',
  'SELECT * FROM leads WHERE id = (SELECT id FROM leads WHERE contact_id = $1 AND deleted_at IS NULL ORDER BY created_at DESC, id DESC LIMIT 1) FOR NO KEY UPDATE',
);
const insert = sharedStatement(shared.insert);
const addTags = statement(
  'leads.addTags',
  'INSERT INTO lead_tags (lead_id, tag_id) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING',
);
const tagIds = sharedStatement<{ tag_id: string }>(shared.tagIds);
const addComment = sharedStatement(shared.addComment);
// The caps counted and the comment added in one statement: the unit holds the lead's lock, so no other
// unit adds a comment in between.
const addCommentWithin = statement(
  'leads.addCommentWithin',
  `INSERT INTO lead_comments (id, lead_id, body, author_kind, author_ref, created_at)
   SELECT $1, $2, $3, $4, $5, $6
   WHERE (SELECT count(*) < $7 AND coalesce(sum(octet_length(body)), 0) + octet_length($3::text) <= $8 FROM lead_comments WHERE lead_id = $2)`,
);
const commentsCount = statement<{ n: number }>(
  'leads.commentsCount',
  'SELECT count(*)::int AS n FROM lead_comments WHERE lead_id = $1',
);
// octet_length of a text is its size in the database's encoding (UTF-8), read without detoasting it.
const commentTotals = statement<{ n: number; bytes: number }>(
  'leads.commentTotals',
  'SELECT count(*)::int AS n, coalesce(sum(octet_length(body)), 0)::float8 AS bytes FROM lead_comments WHERE lead_id = $1',
);
// Kept by the trigger of migration 1: a point read, whatever the size of the table.
const counted = statement<{ n: string }>(
  'leads.counted',
  'SELECT sum(n) AS n FROM lead_counts WHERE kind = $1 AND item_id = $2',
);
// LIMIT NULL: no limit.
const legacy = statement<LeadRow>(
  'leads.legacy',
  "SELECT * FROM leads WHERE integration_id = $1 AND origin = 'legacy' AND deleted_at IS NULL ORDER BY created_at, id LIMIT $2",
);
const legacyUnlinked = statement<LeadRow>('leads.legacyUnlinked', UNLINKED_LEGACY.list);
const unlinkedCount = statement<{ n: number }>('leads.unlinkedCount', UNLINKED_LEGACY.count);
const commentsPage = statement<{
  id: string;
  lead_id: string;
  body: string;
  author_kind: Comment['authorKind'];
  author_ref: string | null;
  created_at: string;
}>('leads.commentsPage', 'SELECT * FROM lead_comments WHERE lead_id = $1 ORDER BY created_at, id LIMIT $2 OFFSET $3');
const addPayment = sharedStatement(shared.addPayment);
// numeric sums exactly at any size; the driver hands it over as text, read as a bigint.
const payments = statement<{ total: string; last: string | null }>(
  'leads.payments',
  'SELECT coalesce(sum(amount_minor), 0)::text AS total, max(created_at) AS last FROM lead_payments WHERE lead_id = $1',
);

/** The SELECT of a filter's shape, with its values in the order of its parameters. */
function listQuery(f: LeadFilter): { text: string; values: unknown[] } {
  const values: unknown[] = [f.workspaceId];
  const param = (value: unknown) => `$${values.push(value)}`;
  const where = ['workspace_id = $1', 'deleted_at IS NULL'];
  if (f.stageId !== undefined) where.push(`stage_id = ${param(f.stageId)}`);
  if (f.integrationId !== undefined) where.push(`integration_id = ${param(f.integrationId)}`);
  if (f.before !== undefined) where.push(`created_at < ${param(f.before)}`);
  for (const c of f.fields) {
    const own = `v.lead_id = leads.id AND v.field_id = ${param(c.fieldId)}`;
    // jsonb ? text: the array of selected options holds that option.
    if (c.column === 'selected_options')
      for (const option of c.value)
        where.push(
          `EXISTS (SELECT 1 FROM custom_field_values v WHERE ${own} AND v.selected_options ? ${param(option)})`,
        );
    else where.push(`EXISTS (SELECT 1 FROM custom_field_values v WHERE ${own} AND v.${c.column} = ${param(c.value)})`);
  }
  return {
    text: `SELECT * FROM leads WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT ${param(f.limit)}`,
    values,
  };
}

export function pgLeadRepo(sql: Sql): LeadRepo {
  const one = (row: LeadRow | null) => (row ? rowToLead(row) : null);
  return {
    get: async (id) => one(await get.one(sql, id)),
    lock: async (id) => one(await lock.one(sql, id)),
    lockLatestOfContact: async (contactId) => one(await lockLatest.one(sql, contactId)),
    insert: (lead) =>
      insert.later(
        sql,
        [rowName('leads', lead.id)],
        lead.id,
        lead.workspaceId,
        lead.contactId,
        lead.integrationId,
        lead.origin,
        ...(Object.keys(patchColumns) as (keyof LeadPatch)[]).map((key) => toColumnValue(key, lead[key])),
        lead.createdAt,
      ),
    update: async (id, patch) => {
      const keys = (Object.keys(patch) as (keyof LeadPatch)[]).filter((k) => k in patchColumns).sort();
      if (keys.length === 0) return;
      const text = `UPDATE leads SET ${keys.map((key, i) => `${patchColumns[key]} = $${i + 2}`).join(', ')} WHERE id = $1`;
      await writeLater(sql, {
        name: nameOf('leads.update', text),
        text,
        values: [id, ...keys.map((key) => toColumnValue(key, patch[key]))],
        rows: [rowName('leads', id)],
      });
    },
    addTags: async (leadId, ids) => {
      if (ids.length > 0) await addTags.later(sql, [rowName('lead_tags', leadId)], leadId, ids);
    },
    tagIds: async (leadId) => (await tagIds.rows(sql, leadId)).map((r) => r.tag_id),
    addComment: (c) =>
      addComment.later(
        sql,
        [rowName('lead_comments', c.id)],
        c.id,
        c.leadId,
        c.body,
        c.authorKind,
        c.authorRef,
        c.createdAt,
      ),
    addCommentWithin: (c, caps) =>
      addCommentWithin.later(
        sql,
        [rowName('lead_comments', c.id)],
        c.id,
        c.leadId,
        c.body,
        c.authorKind,
        c.authorRef,
        c.createdAt,
        caps.count,
        caps.bytes,
      ),
    commentsCount: async (leadId) => (await commentsCount.one(sql, leadId))?.n ?? 0,
    commentTotals: async (leadId) => {
      const row = (await commentTotals.one(sql, leadId))!;
      return { count: row.n, bytes: row.bytes };
    },
    countByStatus: async (statusId) => Number((await counted.one(sql, 'status', statusId))?.n ?? 0),
    countByGroup: async (groupId) => Number((await counted.one(sql, 'group', groupId))?.n ?? 0),
    listLegacy: async (integrationId, unlinkedOnly, limit) =>
      (await (unlinkedOnly ? legacyUnlinked : legacy).rows(sql, integrationId, limit ?? null)).map(rowToLead),
    countUnlinkedLegacy: async (integrationId, max) => (await unlinkedCount.one(sql, integrationId, max))!.n,
    unlinkedLegacyOf: async (integrationId, template, externalIds, examined) => {
      if (externalIds.length === 0) return [];
      const { text, values } = unlinkedLegacyOfQuery(template);
      return (
        await sql.query<LeadRow>({
          name: nameOf('leads.unlinkedOf', text),
          text,
          values: [integrationId, externalIds, examined, ...values],
        })
      ).rows.map(rowToLead);
    },
    list: async (f) => {
      const { text, values } = listQuery(f);
      return (await sql.query<LeadRow>({ name: nameOf('leads.list', text), text, values })).rows.map(rowToLead);
    },
    listComments: async (leadId, page) =>
      (await commentsPage.rows(sql, leadId, page.limit, page.offset)).map((c) => ({
        id: c.id,
        leadId: c.lead_id,
        body: c.body,
        authorKind: c.author_kind,
        authorRef: c.author_ref,
        createdAt: c.created_at,
      })),
    addPayment: async (p) =>
      void (await addPayment.run(sql, p.id, p.leadId, p.amountMinor.toString(), p.note, p.createdAt)),
    payments: async (leadId) => {
      const row = (await payments.one(sql, leadId))!;
      return { totalMinor: BigInt(row.total), lastAt: row.last };
    },
  };
}
