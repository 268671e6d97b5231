// Pages of one integration's leads, newest first, each read from the index where the last one ended. SQL only.
import type { Db } from '../db/connection.js';
import { rowToLead, type Lead, type LeadRow } from '../intake/lead-store.js';

/** Where a page starts: after or before a lead (keyset), or a bounded number of leads from the newest. */
export type PagePosition = { after: PageKey } | { before: PageKey } | { offset: number };

/** The order of a page: newest first, ties broken by id. */
export interface PageKey {
  createdAt: string;
  id: string;
}

export interface LeadPageRepo {
  /** The integration's leads that are not deleted (kept by triggers: a point read). */
  countOfIntegration(integrationId: string): Promise<number>;
  /** Up to `limit` of the integration's leads from `position`, newest first. */
  pageOfIntegration(integrationId: string, position: PagePosition, limit: number): Promise<Lead[]>;
}

export function sqliteLeadPageRepo(db: Db): LeadPageRepo {
  const live = 'integration_id = @integrationId AND deleted_at IS NULL';
  const count = db.prepare<[string], { n: number }>('SELECT n FROM integration_lead_counts WHERE integration_id = ?');
  const after = db.prepare<Record<string, unknown>, LeadRow>(
    `SELECT * FROM leads WHERE ${live} AND (created_at, id) < (@createdAt, @id) ORDER BY created_at DESC, id DESC LIMIT @limit`,
  );
  const before = db.prepare<Record<string, unknown>, LeadRow>(
    `SELECT * FROM leads WHERE ${live} AND (created_at, id) > (@createdAt, @id) ORDER BY created_at, id LIMIT @limit`,
  );
  // The skipped leads are stepped over in the index only (the inner SELECT reads no table row); the
  // offset itself is bounded by the caller.
  const offset = db.prepare<Record<string, unknown>, LeadRow>(
    `SELECT * FROM leads WHERE id IN (SELECT id FROM leads WHERE ${live} ORDER BY created_at DESC, id DESC LIMIT @limit OFFSET @offset)
     ORDER BY created_at DESC, id DESC`,
  );
  return {
    countOfIntegration: async (integrationId) => count.get(integrationId)?.n ?? 0,
    pageOfIntegration: async (integrationId, position, limit) => {
      if ('after' in position) return after.all({ integrationId, limit, ...position.after }).map(rowToLead);
      if ('before' in position) return before.all({ integrationId, limit, ...position.before }).map(rowToLead).reverse();
      return offset.all({ integrationId, limit, offset: position.offset }).map(rowToLead);
    },
  };
}
