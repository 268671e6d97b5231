// Leads, their tags, comments and payments in SQLite: the shared statements
// (src/store/statements/leads.ts), the orders of ties by rowid, the tags added one by one, the comment
// caps and totals (bytes counted as BLOB lengths), the counts, the payments summed in slices, and the
// statements generated per shape.
import type { Db } from '../connection.js';
import { prepareShared } from '../shared.js';
import type { Comment, LeadFilter, LeadPatch, LeadRepo } from '../../repos/leads.js';
import { patchColumns, rowToLead as decodedRowToLead, type LeadRow as DecodedLeadRow } from '../../sql-rows.js';
import { leadStatements as shared } from '../../statements/leads.js';
import { UNLINKED_LEGACY, unlinkedLegacyOfQuery } from './person-id.js';

/** The row as SQLite holds it: the extra data as JSON text. */
export type LeadRow = Omit<DecodedLeadRow, 'extra_data'> & { extra_data: string | null };

export const rowToLead = (r: LeadRow) =>
  decodedRowToLead({
    ...r,
    extra_data: r.extra_data === null ? null : (JSON.parse(r.extra_data) as Record<string, unknown>),
  });

const toColumnValue = (key: keyof LeadPatch, value: unknown): unknown =>
  key === 'extraData' ? (value === null ? null : JSON.stringify(value)) : value;

export function sqliteLeadRepo(db: Db): LeadRepo {
  const get = prepareShared<LeadRow>(db, shared.get);
  const latest = db.prepare<[string], LeadRow>(
    'SELECT * FROM leads WHERE contact_id = ? AND deleted_at IS NULL ORDER BY created_at DESC, rowid DESC LIMIT 1',
  );
  const insert = prepareShared(db, shared.insert);
  const addTag = db.prepare('INSERT INTO lead_tags (lead_id, tag_id) VALUES (?, ?) ON CONFLICT DO NOTHING');
  const tagIds = prepareShared<{ tag_id: string }>(db, shared.tagIds);
  const addComment = prepareShared(db, shared.addComment);
  // The caps counted and the comment added in one statement (the unit holds the lead's lock anyway).
  const addCommentWithin = db.prepare(
    `INSERT INTO lead_comments (id, lead_id, body, author_kind, author_ref, created_at)
     SELECT @id, @leadId, @body, @authorKind, @authorRef, @createdAt
     WHERE (SELECT count(*) < @maxCount AND coalesce(sum(length(CAST(body AS BLOB))), 0) + length(CAST(@body AS BLOB)) <= @maxBytes
            FROM lead_comments WHERE lead_id = @leadId)`,
  );
  const commentsCount = db.prepare<[string], { n: number }>(
    'SELECT count(*) AS n FROM lead_comments WHERE lead_id = ?',
  );
  // A TEXT cast to BLOB is its bytes in the database's encoding, UTF-8 here.
  const commentTotals = db.prepare<[string], { n: number; bytes: number }>(
    'SELECT count(*) AS n, coalesce(sum(length(CAST(body AS BLOB))), 0) AS bytes FROM lead_comments WHERE lead_id = ?',
  );
  // Kept by triggers (migration 6): a point read, whatever the size of the table.
  const byStatus = db.prepare<[string], { n: number }>(
    "SELECT n FROM lead_counts WHERE kind = 'status' AND item_id = ?",
  );
  // LIMIT -1: no limit.
  const legacy = db.prepare<[string, number], LeadRow>(
    "SELECT * FROM leads WHERE integration_id = ? AND origin = 'legacy' AND deleted_at IS NULL ORDER BY created_at, rowid LIMIT ?",
  );
  const legacyUnlinked = db.prepare<[string, number], LeadRow>(UNLINKED_LEGACY.list);
  const unlinkedCount = db.prepare<[string, number], { n: number }>(UNLINKED_LEGACY.count);
  // One prepared SELECT per shape of person-id template, prepared the first time that shape is used.
  const unlinkedOf = new Map<string, ReturnType<Db['prepare']>>();
  const byGroup = db.prepare<[string], { n: number }>("SELECT n FROM lead_counts WHERE kind = 'group' AND item_id = ?");

  // One prepared UPDATE per set of patched members, prepared the first time that set is used.
  const updates = new Map<string, ReturnType<Db['prepare']>>();
  const updateFor = (keys: (keyof LeadPatch)[]) => {
    const signature = keys.join(',');
    let statement = updates.get(signature);
    if (!statement) {
      const sets = keys.map((key) => `${patchColumns[key]} = @${key}`).join(', ');
      statement = db.prepare(`UPDATE leads SET ${sets} WHERE id = @id`);
      updates.set(signature, statement);
    }
    return statement;
  };

  // One prepared SELECT per shape of filter, prepared the first time that shape is used.
  const lists = new Map<string, ReturnType<Db['prepare']>>();
  const listFor = (f: LeadFilter) => {
    const where = ['workspace_id = @workspaceId', 'deleted_at IS NULL'];
    if (f.stageId !== undefined) where.push('stage_id = @stageId');
    if (f.integrationId !== undefined) where.push('integration_id = @integrationId');
    if (f.before !== undefined) where.push('created_at < @before');
    f.fields.forEach((c, i) => {
      const own = `v.lead_id = leads.id AND v.field_id = @field${i}`;
      if (c.column === 'selected_options') {
        c.value.forEach((_, j) =>
          where.push(
            `EXISTS (SELECT 1 FROM custom_field_values v, json_each(v.selected_options) o WHERE ${own} AND o.value = @value${i}_${j})`,
          ),
        );
      } else {
        where.push(`EXISTS (SELECT 1 FROM custom_field_values v WHERE ${own} AND v.${c.column} = @value${i})`);
      }
    });
    const sql = `SELECT * FROM leads WHERE ${where.join(' AND ')} ORDER BY created_at DESC, rowid DESC LIMIT @limit`;
    let statement = lists.get(sql);
    if (!statement) lists.set(sql, (statement = db.prepare(sql)));
    return statement;
  };
  const listParams = (f: LeadFilter) => {
    const params: Record<string, unknown> = { workspaceId: f.workspaceId, limit: f.limit };
    if (f.stageId !== undefined) params.stageId = f.stageId;
    if (f.integrationId !== undefined) params.integrationId = f.integrationId;
    if (f.before !== undefined) params.before = f.before;
    f.fields.forEach((c, i) => {
      params[`field${i}`] = c.fieldId;
      if (c.column === 'selected_options') c.value.forEach((v, j) => (params[`value${i}_${j}`] = v));
      else params[`value${i}`] = c.column === 'boolean_value' ? (c.value ? 1 : 0) : c.value;
    });
    return params;
  };

  const commentsPage = db.prepare<
    [string, number, number],
    {
      id: string;
      lead_id: string;
      body: string;
      author_kind: Comment['authorKind'];
      author_ref: string | null;
      created_at: string;
    }
  >('SELECT * FROM lead_comments WHERE lead_id = ? ORDER BY created_at, rowid LIMIT ? OFFSET ?');
  const addPayment = prepareShared(db, shared.addPayment);
  // SQLite's sum() of the amounts overflowed 64 bits (and every read of the lead was a 500 from then
  // on). Summed in three slices of six digits, no slice sum can overflow: that would take 9.2e12
  // payments, more rows than a database file of SQLite's maximum size (2^48 bytes) can hold. The
  // slices are read as bigints and joined exactly.
  const payments = db
    .prepare<[string], { high: bigint; mid: bigint; low: bigint; last: string | null }>(
      `SELECT coalesce(sum(amount_minor / 1000000000000), 0) AS high, coalesce(sum(amount_minor / 1000000 % 1000000), 0) AS mid,
         coalesce(sum(amount_minor % 1000000), 0) AS low, max(created_at) AS last FROM lead_payments WHERE lead_id = ?`,
    )
    .safeIntegers(true);

  return {
    listComments: async (leadId, page) =>
      commentsPage.all(leadId, page.limit, page.offset).map((c) => ({
        id: c.id,
        leadId: c.lead_id,
        body: c.body,
        authorKind: c.author_kind,
        authorRef: c.author_ref,
        createdAt: c.created_at,
      })),
    addPayment: async (p) => void addPayment.run(p.id, p.leadId, p.amountMinor, p.note, p.createdAt),
    payments: async (leadId) => {
      const row = payments.get(leadId)!;
      return {
        totalMinor: BigInt(row.high) * 10n ** 12n + BigInt(row.mid) * 10n ** 6n + BigInt(row.low),
        lastAt: row.last,
      };
    },
    list: async (f) => (listFor(f).all(listParams(f)) as LeadRow[]).map(rowToLead),
    get: async (id) => {
      const row = get.get(id);
      return row ? rowToLead(row) : null;
    },
    // One writer: the unit that reads the row is the only one that can write it (locks.ts).
    lock: async (id) => {
      const row = get.get(id);
      return row ? rowToLead(row) : null;
    },
    // One writer: the unit that reads the row is the only one that can write it (locks.ts).
    lockLatestOfContact: async (contactId) => {
      const row = latest.get(contactId);
      return row ? rowToLead(row) : null;
    },
    insert: async (lead) =>
      void insert.run(
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
      const params: Record<string, unknown> = { id };
      for (const key of keys) params[key] = toColumnValue(key, patch[key]);
      updateFor(keys).run(params);
    },
    addTags: async (leadId, ids) => {
      for (const tagId of ids) addTag.run(leadId, tagId);
    },
    tagIds: async (leadId) => tagIds.all(leadId).map((r) => r.tag_id),
    addComment: async (c) => void addComment.run(c.id, c.leadId, c.body, c.authorKind, c.authorRef, c.createdAt),
    addCommentWithin: async (comment, caps) =>
      void addCommentWithin.run({ ...comment, maxCount: caps.count, maxBytes: caps.bytes }),
    commentsCount: async (leadId) => commentsCount.get(leadId)?.n ?? 0,
    commentTotals: async (leadId) => {
      const row = commentTotals.get(leadId)!;
      return { count: row.n, bytes: row.bytes };
    },
    countByStatus: async (statusId) => byStatus.get(statusId)?.n ?? 0,
    countByGroup: async (groupId) => byGroup.get(groupId)?.n ?? 0,
    listLegacy: async (integrationId, unlinkedOnly, limit) =>
      (unlinkedOnly ? legacyUnlinked : legacy).all(integrationId, limit ?? -1).map(rowToLead),
    countUnlinkedLegacy: async (integrationId, max) => unlinkedCount.get(integrationId, max)!.n,
    unlinkedLegacyOf: async (integrationId, template, externalIds, examined) => {
      if (externalIds.length === 0) return [];
      const { text, params } = unlinkedLegacyOfQuery(template);
      let statement = unlinkedOf.get(text);
      if (!statement) unlinkedOf.set(text, (statement = db.prepare(text)));
      return (statement.all({ ...params, integrationId, examined, ids: JSON.stringify(externalIds) }) as LeadRow[]).map(
        rowToLead,
      );
    },
  };
}
