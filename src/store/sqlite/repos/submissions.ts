// The idempotency ledger in SQLite: the shared statements (src/store/statements/submissions.ts) and
// the list needing review (the flag is 0 or 1).
import type { Db } from '../connection.js';
import { prepareShared } from '../shared.js';
import type { SubmissionRepo } from '../../repos/submissions.js';
import {
  SUBMISSION_COLUMNS,
  rowToSubmission as decodedRowToSubmission,
  type SubmissionRow as DecodedSubmissionRow,
} from '../../sql-rows.js';
import { submissionStatements as shared } from '../../statements/submissions.js';
import { DuplicateEventError } from '../../store.js';
import { isUniqueViolation } from '../errors.js';

/** The row as SQLite holds it: the outcome as JSON text, the flag as 0 or 1. */
type SubmissionRow = Omit<DecodedSubmissionRow, 'outcome' | 'needs_review'> & { outcome: string; needs_review: number };

const rowToSubmission = (r: SubmissionRow) =>
  decodedRowToSubmission({ ...r, outcome: JSON.parse(r.outcome), needs_review: r.needs_review === 1 });

export function sqliteSubmissionRepo(db: Db): SubmissionRepo {
  const find = prepareShared<SubmissionRow>(db, shared.find);
  const firstBody = prepareShared<{ body: string }>(db, shared.firstBody);
  const insert = prepareShared(db, shared.insert);
  const review = db.prepare<[string, number], SubmissionRow>(
    `SELECT ${SUBMISSION_COLUMNS} FROM submissions WHERE integration_id = ? AND needs_review = 1 ORDER BY created_at DESC LIMIT ?`,
  );
  const submittedTo = prepareShared<{ found: number }>(db, shared.submittedTo);
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
      const row = firstBody.get(id);
      return row === undefined ? null : (JSON.parse(row.body) as unknown);
    },
    insert: async (s) => {
      try {
        insert.run(
          s.id,
          s.integrationId,
          s.endpoint,
          s.eventId,
          s.fingerprint,
          JSON.stringify(s.body),
          s.contactId,
          s.leadId,
          JSON.stringify(s.outcome),
          s.needsReview ? 1 : 0,
          s.reviewReason,
          s.createdAt,
        );
      } catch (error) {
        if (isUniqueViolation(error)) throw new DuplicateEventError();
        throw error;
      }
    },
    listNeedingReview: async (integrationId, limit) => review.all(integrationId, limit).map(rowToSubmission),
  };
}
