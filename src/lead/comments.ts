// The caps on a lead's comments, which bound every answer that lists them.
import type { Repos } from '../store/store.js';

/**
 * Comments one lead may hold. A bot that comments on every message of a conversation writes a few
 * dozen; 500 is far past that, and keeps `GET leads/{id}/comments/` an answer of bounded size (6,000
 * comments of 10 KB made answers of 60 MB that held the process for seconds).
 */
export const COMMENTS_PER_LEAD_MAX = 500;

/** UTF-8 bytes of comment text one lead may hold, all its comments together: about a hundred of the largest. */
export const COMMENT_BYTES_PER_LEAD_MAX = 1_048_576;

/** Characters of one comment (a legacy comment's `text`, a v1 submission's `notes`). */
export const COMMENT_TEXT_MAX = 10_000;

/** The caps as `leads.addCommentWithin` takes them: a note added where no answer is owed (a v1 `notes`). */
export const COMMENT_CAPS = { count: COMMENTS_PER_LEAD_MAX, bytes: COMMENT_BYTES_PER_LEAD_MAX } as const;

export interface CommentLimit {
  /** The cap's name, as a problem's `limit` member says it. */
  limit: 'comments_per_lead' | 'comment_bytes_per_lead';
  max: number;
  detail: string;
}

/**
 * The cap one more comment of `text` would pass on this lead, or null when it fits. The caller holds
 * the lead's lock (`leads.lock`, or the held latest lead of `holds.person` and `holds.binding`: every writer of comments does), so no
 * other unit adds a comment between this count and the insert: the caps hold exactly, on any number of
 * replicas. On SQLite the units run one after the other anyway.
 */
export async function commentLimitPassed(tx: Repos, leadId: string, text: string): Promise<CommentLimit | null> {
  const { count, bytes } = await tx.leads.commentTotals(leadId);
  if (count >= COMMENTS_PER_LEAD_MAX) {
    return {
      limit: 'comments_per_lead',
      max: COMMENTS_PER_LEAD_MAX,
      detail: `This lead has ${count} comments, the most a lead may hold (${COMMENTS_PER_LEAD_MAX}).`,
    };
  }
  const added = Buffer.byteLength(text, 'utf8');
  if (bytes + added > COMMENT_BYTES_PER_LEAD_MAX) {
    return {
      limit: 'comment_bytes_per_lead',
      max: COMMENT_BYTES_PER_LEAD_MAX,
      detail: `This lead's comments hold ${bytes} bytes of text; ${added} more would pass the most a lead may hold (${COMMENT_BYTES_PER_LEAD_MAX} bytes).`,
    };
  }
  return null;
}
