// The idempotency ledger in SQLite.
import type { Db } from '../connection.js';
import type { SubmissionRepo } from '../../repos/submissions.js';
import {
  SUBMISSION_COLUMNS,
  rowToSubmission as decodedRowToSubmission,
  type SubmissionRow as DecodedSubmissionRow,
} from '../../sql-rows.js';
import { DuplicateEventError } from '../../store.js';
import { isUniqueViolation } from '../errors.js';

/** The row as SQLite holds it: the outcome as JSON text, the flag as 0 or 1. */
type SubmissionRow = Omit<DecodedSubmissionRow, 'outcome' | 'needs_review'> & { outcome: string; needs_review: number };

const rowToSubmission = (r: SubmissionRow) =>
  decodedRowToSubmission({ ...r, outcome: JSON.parse(r.outcome), needs_review: r.needs_review === 1 });

export function sqliteSubmissionRepo(db: Db): SubmissionRepo {
  const find = db.prepare<[string, string, string], SubmissionRow>(
    `SELECT ${SUBMISSION_COLUMNS} FROM submissions WHERE integration_id = ? AND endpoint = ? AND event_id = ?`,
  );
  const firstBody = db.prepare<[string], string>('SELECT body FROM submissions WHERE id = ?').pluck();
  const insert = db.prepare(
    `INSERT INTO submissions (id, integration_id, endpoint, event_id, fingerprint, body, contact_id, lead_id, outcome,
       needs_review, review_reason, created_at)
     VALUES (@id, @integrationId, @endpoint, @eventId, @fingerprint, @body, @contactId, @leadId, @outcome,
       @needsReview, @reviewReason, @createdAt)`,
  );
  const review = db.prepare<[string, number], SubmissionRow>(
    `SELECT ${SUBMISSION_COLUMNS} FROM submissions WHERE integration_id = ? AND needs_review = 1 ORDER BY created_at DESC LIMIT ?`,
  );
  const submittedTo = db.prepare<[string, string], { found: number }>(
    "SELECT 1 AS found FROM submissions WHERE lead_id = ? AND integration_id = ? AND endpoint = 'leads' LIMIT 1",
  );
  return {
    submittedTo: async (integrationId, leadId) => submittedTo.get(leadId, integrationId) !== undefined,
    find: async (integrationId, endpoint, eventId) => {
      const row = find.get(integrationId, endpoint, eventId);
      return row ? rowToSubmission(row) : null;
    },
    // The lead's parts are several statements here: a replay reads them in a view of their own.
    findWithLead: async (integrationId, endpoint, eventId) => {
      const row = find.get(integrationId, endpoint, eventId);
      return row ? rowToSubmission(row) : null;
    },
    firstBody: async (id) => {
      const body = firstBody.get(id);
      return body === undefined ? null : (JSON.parse(body) as unknown);
    },
    insert: async (s) => {
      try {
        insert.run({
          ...s,
          body: JSON.stringify(s.body),
          outcome: JSON.stringify(s.outcome),
          needsReview: s.needsReview ? 1 : 0,
        });
      } catch (error) {
        if (isUniqueViolation(error)) throw new DuplicateEventError();
        throw error;
      }
    },
    listNeedingReview: async (integrationId, limit) => review.all(integrationId, limit).map(rowToSubmission),
  };
}
