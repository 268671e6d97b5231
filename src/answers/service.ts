// Answers submission (docs/api.md, "submit answers about a lead"): find the person's lead through this integration, apply, record once.
import { AppError } from '../errors.js';
import type { Store } from '../store/store.js';
import type { Integration } from '../rules/catalog.js';
import { runOnce } from '../idempotency/replay.js';
import type { AnswersResult } from './schemas.js';
import { answerFieldIds, applyAnswers, readKept } from './engine.js';
import type { AnswersResponse, AnswersSubmission } from './schemas.js';
import { newId } from '../store/ids.js';
import { lockLatestLead } from '../lead/lock.js';
import { testMatchRecorder } from '../migration/test-matches.js';

/** Recorded the first time; a replay returns it with `deleted` as the lead is now. */
interface AnswersOutcomeRecord {
  lead_id: string;
  contact_id: string;
  submission_id: string;
  answers: AnswersResult;
}

export function submitAnswers(
  deps: { store: Store; now?: () => string },
  integration: Integration,
  body: AnswersSubmission,
  options: { inexact?: ReadonlySet<string>; testKeyId?: string | undefined } = {},
): Promise<AnswersResponse> {
  const now = deps.now ?? (() => new Date().toISOString());
  // A test call (docs/api.md, "Test mode"): rehearsed, and the person it found recorded. The person is
  // one this integration bound (the only ones this route reaches); a lead another integration or an
  // operator made is answered as if it held no value, so no stored value is confirmed.
  const rehearsal =
    options.testKeyId === undefined
      ? undefined
      : { found: testMatchRecorder(deps.store, integration, options.testKeyId, 'answers', body.event_id, now) };
  return runOnce<AnswersResponse>(
    deps.store,
    { integrationId: integration.id, endpoint: 'answers', eventId: body.event_id, body, rehearsal },
    {
      replay: async (r, submission, found) => {
        const record = submission.outcome as AnswersOutcomeRecord;
        const lead = found === undefined ? await r.leads.get(record.lead_id) : (found?.lead ?? null);
        return { ...record, replayed: true, deleted: lead === null || lead.deletedAt !== null };
      },
      fresh: async (tx) => {
        // The person bound, its latest lead locked (a concurrent field write to it decides after this
        // one's, lead/field-write.ts) and the values these answers decide on: one round trip on
        // PostgreSQL (repos/holds.ts). A lead deleted while the unit waited: the next latest, read again.
        // The kept counts of answers no field will take, read at once (answers/keep.ts).
        const kept = readKept(tx, integration, body.answers, options.inexact);
        const held = await tx.holds.binding(
          integration.id,
          body.external_contact_id,
          answerFieldIds(integration, body.answers),
        );
        const { contact } = held;
        const again = held.latest !== null && held.latest.deletedAt !== null;
        const lead = again && contact ? await lockLatestLead(tx, contact.id) : held.latest;
        if (!contact || !lead) {
          // Thrown inside the unit: nothing is recorded, so the same event_id works after the lead exists.
          throw new AppError(
            'not-found',
            `This integration has no lead for external_contact_id "${body.external_contact_id}". ` +
              'Submit the lead first (POST /api/integrations/v1/leads/), then resend these answers with the same event_id.',
          );
        }
        const at = now();
        const submissionId = newId();
        const own = lead.integrationId === integration.id;
        // Rehearsed on a lead this integration did not make: decided as on a lead without values.
        const blind = rehearsal !== undefined && !own;
        const target = blind ? { leadIsNew: true } : again ? {} : { values: held.values };
        const record: AnswersOutcomeRecord = {
          // Nor its id: made up for the call, as a test lead's is.
          lead_id: blind ? newId() : lead.id,
          contact_id: contact.id,
          submission_id: submissionId,
          answers: await applyAnswers(
            tx,
            integration,
            { leadId: lead.id, submissionId, at, kept, ...target },
            body.answers,
            options.inexact,
          ),
        };
        return {
          reply: async () => ({ ...record, replayed: false, deleted: false }),
          record: { id: submissionId, contactId: contact.id, leadId: lead.id, outcome: record, createdAt: at },
          found: { contactId: contact.id, leadId: lead.id, matchedBy: 'external_contact_id', own },
        };
      },
    },
  );
}
