// Pages of one integration's leads, newest first, each read from the index where the last one ended.
import type { Lead } from './leads.js';

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
