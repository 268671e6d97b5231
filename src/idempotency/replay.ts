// Deciding whether an event was seen: a replay of the same data, or a 409 naming the differing paths.
import { AppError } from '../errors.js';
import { DuplicateEventError, StoreUnavailableError, type Repos, type Store } from '../store/store.js';
import type { Endpoint, LeadWithParts, Submission } from '../store/repos/submissions.js';
import { differingPaths, fingerprint } from './fingerprint.js';
import { LEDGER_PLACES, type EventLookUps } from './ledger.js';
import type { TestMatch } from '../store/repos/test-matches.js';

/** A live person a unit found (a test call's, recorded after its rollback: migration/test-matches.ts). */
export type FoundPerson = Pick<TestMatch, 'contactId' | 'leadId' | 'matchedBy' | 'own'>;

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
   * event_id it used stays free for the live call. A live person the unit found is given to `found`
   * after the rollback, and the call is answered only once that has resolved.
   */
  rehearsal?: { found: (person: FoundPerson) => Promise<void> } | undefined;
  /**
   * An earlier event this request is a resend of when the ledger holds it and `holds` says so of its
   * record's time (a legacy POST's previous day, docs/legacy-api.md), with the body the request has as
   * that event. Looked for beside `eventId`, in the same round trip; while it holds, it wins.
   */
  earlier?: { eventId: string; body: unknown; holds: (createdAt: string) => boolean };
}

/** Runs of a unit that lost the race to record its event: each then finds the event and replays it. */
const MAX_FRESH_ATTEMPTS = 3;

type Found = Submission & { lead?: LeadWithParts | null };
/** The recorded event a request is, with the body it has as that event. */
interface Known {
  found: Found;
  body: unknown;
}

/** Thrown out of a unit that found its event already recorded: the unit is rolled back and the event replayed. */
class KnownEvent extends Error {
  constructor(readonly known: Known) {
    super('the event is recorded already');
  }
}

/**
 * Runs `fresh` exactly once per (integration, endpoint, event_id). A known event with the same
 * fingerprint is answered by `replay` (from committed data); with other data it is a 409 naming the
 * differing paths (the first body is read for that alone: the look-up leaves it out).
 *
 * The ledger is looked up where the engine does it cheapest (ledger.ts): before the unit, or inside it
 * beside the work, in its first round trip. An event found inside the unit rolls it back (nothing of
 * `fresh` was sent: its writes are held back until the unit's next statement) and is replayed. If
 * another writer records the event between our look-up and our insert, the ledger's uniqueness rejects
 * ours (DuplicateEventError), our unit is rolled back whole, and the next attempt finds and replays
 * the committed one. `fresh` records its event in the same unit as its work, before its reply is
 * rendered: both stand, or neither does.
 */
export async function runOnce<T>(
  store: Store,
  request: IdempotentRequest,
  handlers: {
    /**
     * Answers a known event from one read of committed data (`store.view`). `lead` is the event's lead
     * with its parts when the ledger's look-up brought them (null: no such lead), and absent when it
     * did not (submissions.findWithLead).
     */
    replay: (r: Repos, submission: Submission, lead?: LeadWithParts | null) => Promise<T>;
    /**
     * The work of a first event; `reply` renders the answer in the same unit, after the record, with
     * the reads it makes at once (`Store.transact` with an answer: on PostgreSQL they go out with the
     * unit's writes and COMMIT). It may run and be undone when the look-up beside it finds the event.
     */
    fresh: (tx: Repos) => Promise<{ record: EventRecord; reply: () => Promise<T>; found?: FoundPerson | null }>;
  },
): Promise<T> {
  if (request.rehearsal !== undefined) return rehearse(store, request.rehearsal, handlers.fresh);
  const ledger = LEDGER_PLACES[store.engine];
  const lookUps = eventLookUps(request);
  const seen = async (r: Repos, { found, body }: Known): Promise<T> => {
    const { lead, ...submission } = found;
    ledger.held(store, lookUps.keyOf(submission.eventId));
    if (submission.fingerprint !== fingerprint(body))
      throw conflict(submission, await r.submissions.firstBody(submission.id), body);
    return handlers.replay(r, submission, lead);
  };

  const before = await ledger.before(store, lookUps);
  if (before) return store.readCommitted((r) => seen(r, before));
  for (let attempt = 1; ; attempt++) {
    try {
      const reply = await store.transact(
        async (tx) => {
          // Sent at once, answered before the first read `fresh` awaits.
          const looked = ledger.inside(attempt, request.earlier !== undefined)
            ? lookUps.both(tx)
            : Promise.resolve(null);
          looked.catch(() => {});
          const work = await handlers.fresh(tx).catch(async (error: unknown) => {
            // A refusal (404, 422) or a failure of an event recorded already is answered as its replay.
            const known = await looked.catch(() => null);
            throw known ? new KnownEvent(known) : error;
          });
          const known = await looked;
          // Thrown before the unit's next statement: the writes `fresh` held back are never sent.
          if (known) throw new KnownEvent(known);
          await tx.submissions.insert({ ...ledgerRow(request), ...work.record });
          return work;
        },
        (_tx, work) => work.reply(),
      );
      ledger.held(store, lookUps.keyOf(request.eventId));
      return reply;
    } catch (error) {
      if (error instanceof KnownEvent) return store.readCommitted((r) => seen(r, error.known));
      if (error instanceof DuplicateEventError && attempt < MAX_FRESH_ATTEMPTS) continue;
      // A refusal (404, 422) of an event another writer recorded meanwhile is answered as that event's
      // replay (or 409), as it would have been had the event been found first; so is a unit the store
      // could not run (it takes no writes now) for an event it can still read; not after the server
      // was lost, when a read would only wait out its own timeout before the 503.
      const again = error instanceof AppError || (error instanceof StoreUnavailableError && error.mayRead);
      const meanwhile = again ? await store.readCommitted(lookUps.both).catch(() => null) : null;
      if (meanwhile) return store.readCommitted((r) => seen(r, meanwhile));
      throw error;
    }
  }
}

/**
 * A test call (docs/api.md, "Test mode"): `fresh` in a unit the store undoes, the ledger neither read
 * nor written; the live person it found is recorded after the rollback, before the answer.
 */
async function rehearse<T>(
  store: Store,
  rehearsal: NonNullable<IdempotentRequest['rehearsal']>,
  fresh: Parameters<typeof runOnce<T>>[2]['fresh'],
): Promise<T> {
  const { reply, found } = await store.rehearse(async (tx) => {
    const work = await fresh(tx);
    return { reply: await work.reply(), found: work.found ?? null };
  });
  if (found !== null) await rehearsal.found(found);
  return reply;
}

/** The request's look-ups in the ledger, each answering the recorded event it is, with the body it has as that event. */
function eventLookUps(request: IdempotentRequest): EventLookUps<Known> {
  const { earlier } = request;
  const findOne = (r: Repos, eventId: string) =>
    r.submissions.findWithLead(request.integrationId, request.endpoint, eventId);
  /** Which of the records found the request is: the earlier event while it holds, else its own. */
  const choose = (own: Found | null, before: Found | null): Known | null => {
    if (before && earlier?.holds(before.createdAt)) return { found: before, body: earlier.body };
    return own ? { found: own, body: request.body } : null;
  };
  return {
    own: async (r) => choose(await findOne(r, request.eventId), null),
    earlier: earlier ? async (r) => choose(null, await findOne(r, earlier.eventId)) : null,
    // Both started before either is awaited: on PostgreSQL they share a round trip.
    both: async (r) => {
      const [own, before] = await Promise.all([
        findOne(r, request.eventId),
        earlier ? findOne(r, earlier.eventId) : null,
      ]);
      return choose(own, before);
    },
    keyOf: (eventId) => JSON.stringify([request.integrationId, request.endpoint, eventId]),
    eventId: request.eventId,
    earlierId: earlier?.eventId ?? null,
  };
}

/** The ledger row of a first event, but for what its handler records. */
const ledgerRow = (request: IdempotentRequest) => ({
  integrationId: request.integrationId,
  endpoint: request.endpoint,
  eventId: request.eventId,
  fingerprint: fingerprint(request.body),
  body: request.body,
  needsReview: false,
  reviewReason: null,
});

function conflict(submission: Submission, firstBody: unknown, body: unknown): AppError {
  const paths = differingPaths(firstBody, body);
  return new AppError(
    'event-id-conflict',
    `event_id "${submission.eventId}" was first used at ${submission.createdAt} with different data at ${paths.join(', ')}. ` +
      'Resend exactly the first body, or use a new event_id for a new event.',
    { paths },
  );
}
