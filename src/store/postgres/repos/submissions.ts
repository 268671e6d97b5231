// The idempotency ledger in PostgreSQL: the shared statements (src/store/statements/submissions.ts),
// the replay that reads the lead with the ledger row, and the list needing review (a boolean flag).
import type { SubmissionRepo } from '../../repos/submissions.js';
import {
  SUBMISSION_COLUMNS,
  rowToSubmission as decodedRowToSubmission,
  type SubmissionRow as DecodedSubmissionRow,
} from '../../sql-rows.js';
import { submissionStatements as shared } from '../../statements/submissions.js';
import { rowName, sharedStatement, statement, type Sql } from '../sql.js';
import { leadWithPartsOf, leadWithPartsSql, type LeadWithPartsRow } from './lead-views.js';

/** The row as the driver hands it over: the outcome as the JSON text it was recorded with (text, not jsonb: its members keep their order). */
type SubmissionRow = Omit<DecodedSubmissionRow, 'outcome'> & { outcome: string };
const rowToSubmission = (r: SubmissionRow) => decodedRowToSubmission({ ...r, outcome: JSON.parse(r.outcome) });

const find = sharedStatement<SubmissionRow>(shared.find);
// The ledger row as JSON beside the lead's (their columns collide), a row per field value of the lead.
const findWithLead = statement<LeadWithPartsRow & { ledger_row: SubmissionRow }>(
  'submissions.findWithLead',
  leadWithPartsSql(
    'to_jsonb(s) AS ledger_row',
    `(SELECT ${SUBMISSION_COLUMNS} FROM submissions WHERE integration_id = $1 AND endpoint = $2 AND event_id = $3) AS s`,
    's.lead_id',
  ),
);
const firstBody = sharedStatement<{ body: unknown }>(shared.firstBody);
// A second record of an event fails as a unique violation (23505) on (integration, endpoint,
// event_id), told as a DuplicateEventError (errors.ts): the unit's COMMIT may be on the wire behind
// this insert before its answer comes, and the violation aborts the transaction, so that COMMIT rolls
// it back. A writer whose insert of the same event is still uncommitted is waited for; if it rolls
// back, this insert stands.
const insert = sharedStatement(shared.insert);
const review = statement<SubmissionRow>(
  'submissions.review',
  `SELECT ${SUBMISSION_COLUMNS} FROM submissions WHERE integration_id = $1 AND needs_review ORDER BY created_at DESC LIMIT $2`,
);
const submittedTo = sharedStatement(shared.submittedTo);

export function pgSubmissionRepo(sql: Sql): SubmissionRepo {
  return {
    submittedTo: async (integrationId, leadId) => (await submittedTo.one(sql, leadId, integrationId)) !== null,
    find: async (integrationId, endpoint, eventId) => {
      const row = await find.one(sql, integrationId, endpoint, eventId);
      return row ? rowToSubmission(row) : null;
    },
    findWithLead: async (integrationId, endpoint, eventId) => {
      const rows = await findWithLead.rowsAlong(sql, integrationId, endpoint, eventId);
      if (rows.length === 0) return null;
      return { ...rowToSubmission(rows[0]!.ledger_row), lead: leadWithPartsOf(rows) };
    },
    firstBody: async (id) => (await firstBody.one(sql, id))?.body ?? null,
    insert: (s) =>
      insert.later(
        sql,
        [rowName('submissions', s.integrationId, s.endpoint, s.eventId)],
        s.id,
        s.integrationId,
        s.endpoint,
        s.eventId,
        s.fingerprint,
        JSON.stringify(s.body),
        s.contactId,
        s.leadId,
        JSON.stringify(s.outcome),
        s.needsReview,
        s.reviewReason,
        s.createdAt,
      ),
    listNeedingReview: async (integrationId, limit) =>
      (await review.rows(sql, integrationId, limit)).map(rowToSubmission),
  };
}
