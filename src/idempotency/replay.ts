// Deciding whether an event was seen: a replay of the same data, or a 409 naming the differing paths.
import { AppError } from '../errors.js';
import { DuplicateEventError, type Repos, type Store } from '../store/store.js';
import type { Endpoint, LeadWithParts, Submission } from '../store/repos/submissions.js';
import { differingPaths, fingerprint } from './fingerprint.js';

/** What a first-time handler records in the event ledger beside its reply. */
export interface EventRecord {
  id: string;
  contactId: string | null;
  leadId: string | null;
  outcome: unknown;
  needsReview?: boolean;
  reviewReason?: string | null;
  createdAt: string;
}

export interface IdempotentRequest {
  integrationId: string;
  endpoint: Endpoint;
  eventId: string;
  body: unknown;
  /**
   * A test call (docs/api.md, "Test mode"): `fresh` runs in a unit the store undoes (`Store.rehearse`),
   * and the ledger is neither read nor written, so the call is never a replay nor a 409, and an
   * event_id it used stays free for the live call.
   */
  rehearsal?: boolean;
}

/** Runs of a unit that lost the race to record its event: each then finds the event and replays it. */
const MAX_FRESH_ATTEMPTS = 3;

/**
 * Runs `fresh` exactly once per (integration, endpoint, event_id). A known event with the same
 * fingerprint is answered by `replay` (from committed data, without entering the write queue); with
 * other data it is a 409 naming the differing paths (the first body is read for that alone: the
 * look-up leaves it out). If another writer records the event between our check and our insert, the
 * store's uniqueness rejects ours (DuplicateEventError), our unit is rolled back whole, and the
 * request is answered as a replay of the committed one. `fresh` records its event before its reply is
 * rendered: the record goes to the database with the unit's other writes (PostgreSQL sends them as one
 * statement before the unit's next read).
 */
export async function runOnce<T>(
  store: Store,
  request: IdempotentRequest,
  handlers: {
    /**
     * Answers a known event from one read of committed data, in one snapshot (`store.view`). `lead` is
     * the event's lead with its parts when the ledger's look-up brought them (null: no such lead), and
     * absent when it did not (submissions.findWithLead).
     */
    replay: (r: Repos, submission: Submission, lead?: LeadWithParts | null) => Promise<T>;
    /**
     * The work of a first event; `reply` renders the answer in the same unit, after the record, with
     * the reads it makes at once (`Store.transact` with an answer: on PostgreSQL they go out with the
     * unit's writes and COMMIT).
     */
    fresh: (tx: Repos) => Promise<{ record: EventRecord; reply: () => Promise<T> }>;
  },
): Promise<T> {
  if (request.rehearsal === true) {
    return store.rehearse(async (tx) => (await handlers.fresh(tx)).reply());
  }
  const print = fingerprint(request.body);
  const seen = async (r: Repos, known: Submission & { lead?: LeadWithParts | null }): Promise<T> => {
    const { lead, ...submission } = known;
    if (submission.fingerprint !== print) throw conflict(submission, await r.submissions.firstBody(submission.id), request.body);
    return handlers.replay(r, submission, lead);
  };
  const find = (r: Repos) => r.submissions.findWithLead(request.integrationId, request.endpoint, request.eventId);

  const known = await store.peek(find);
  if (known) return store.view((r) => seen(r, known));
  for (let attempt = 1; ; attempt++) {
    try {
      return await store.transact(
        async (tx): Promise<{ now: T } | { reply: () => Promise<T> }> => {
          // Looked for again only after losing a race: the first run relies on the ledger's uniqueness
          // (an event recorded meanwhile fails our insert, and the whole unit with it). The look is made
          // inside a unit, on the writer: it sees the winner's commit whatever a reader's snapshot holds.
          const existing = attempt > 1 ? await find(tx) : null;
          if (existing) return { now: await seen(tx, existing) };
          const { reply, record } = await handlers.fresh(tx);
          // Recorded in the same unit as the work: both stand, or neither does.
          await tx.submissions.insert({
            integrationId: request.integrationId,
            endpoint: request.endpoint,
            eventId: request.eventId,
            fingerprint: print,
            body: request.body,
            needsReview: false,
            reviewReason: null,
            ...record,
          });
          return { reply };
        },
        (_tx, work) => ('now' in work ? Promise.resolve(work.now) : work.reply()),
      );
    } catch (error) {
      if (error instanceof DuplicateEventError && attempt < MAX_FRESH_ATTEMPTS) continue;
      // A refusal (404, 422) of an event another writer recorded meanwhile is answered as that
      // event's replay (or 409), as it would have been had the event been found first.
      const meanwhile = error instanceof AppError ? await store.peek(find) : null;
      if (meanwhile) return store.view((r) => seen(r, meanwhile));
      throw error;
    }
  }
}

function conflict(submission: Submission, firstBody: unknown, body: unknown): AppError {
  const paths = differingPaths(firstBody, body);
  return new AppError(
    'event-id-conflict',
    `event_id "${submission.eventId}" was first used at ${submission.createdAt} with different data at ${paths.join(', ')}. ` +
      'Resend exactly the first body, or use a new event_id for a new event.',
    { paths },
  );
}
