// Deciding whether an event was seen: a replay of the same data, or a 409 naming the differing paths.
import { AppError } from '../errors.js';
import { DuplicateEventError, StoreUnavailableError, type Repos, type Store } from '../store/store.js';
import type { Endpoint, LeadWithParts, Submission } from '../store/repos/submissions.js';
import { differingPaths, fingerprint } from './fingerprint.js';
import { rememberEvent, remembersEvent } from './known-events.js';
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
 * Where the ledger is read (docs/architecture.md, "How a unit is sent on PostgreSQL"). On a store
 * whose unit's statements go out together (`store.pipelined`: PostgreSQL), an event this process
 * recorded or replayed lately (known-events.ts) is looked for alone, one statement, and replayed from
 * it; any other is looked for inside the unit, its first statement, sent with BEGIN, the person locks
 * and the match in one round trip. When it finds the event, the unit is rolled back (nothing of
 * `fresh` was sent) and the event replayed: such a resend has taken the person's locks, and waited
 * for them when another unit held them. On SQLite every event is looked for before the unit, as a
 * read, so that a resend never enters the one writer's queue; inside the unit only after a lost race.
 * If another writer records the event between our look-up and our insert, the store's uniqueness
 * rejects ours (DuplicateEventError), our unit is rolled back whole, and the next attempt finds and
 * replays the committed one. `fresh` records its event before its reply is rendered: the record goes
 * to the database with the unit's other writes (PostgreSQL sends them as one statement before the
 * unit's next read).
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
     * unit's writes and COMMIT). It may run and be undone when the look-up beside it finds the event.
     */
    fresh: (tx: Repos) => Promise<{ record: EventRecord; reply: () => Promise<T>; found?: FoundPerson | null }>;
  },
): Promise<T> {
  if (request.rehearsal !== undefined) {
    const { reply, found } = await store.rehearse(async (tx) => {
      const work = await handlers.fresh(tx);
      return { reply: await work.reply(), found: work.found ?? null };
    });
    if (found !== null) await request.rehearsal.found(found);
    return reply;
  }
  const { earlier } = request;
  const keyOf = (eventId: string) => JSON.stringify([request.integrationId, request.endpoint, eventId]);
  const findOne = (r: Repos, eventId: string) => r.submissions.findWithLead(request.integrationId, request.endpoint, eventId);
  /** Which of the records found the request is: the earlier event while it holds, else its own. */
  const choose = (own: Found | null, before: Found | null): Known | null => {
    if (before && earlier?.holds(before.createdAt)) return { found: before, body: earlier.body };
    return own ? { found: own, body: request.body } : null;
  };
  // Both look-ups are started before either is awaited: on PostgreSQL they share a round trip.
  const lookUp = async (r: Repos): Promise<Known | null> => {
    const [own, before] = await Promise.all([findOne(r, request.eventId), earlier ? findOne(r, earlier.eventId) : null]);
    return choose(own, before);
  };
  // Only a pipelined store reads the memory (below); SQLite looks every event up before its unit.
  const remember = (eventId: string) => {
    if (store.pipelined) rememberEvent(store, keyOf(eventId));
  };
  const seen = async (r: Repos, { found, body }: Known): Promise<T> => {
    const { lead, ...submission } = found;
    remember(submission.eventId);
    if (submission.fingerprint !== fingerprint(body)) throw conflict(submission, await r.submissions.firstBody(submission.id), body);
    return handlers.replay(r, submission, lead);
  };

  if (!store.pipelined) {
    // Looked for before the unit, each a statement of its own (a peek: on SQLite it runs on the writer
    // between units, the cheapest read there): a resend is answered without entering the write queue.
    const own = await store.peek((r) => findOne(r, request.eventId));
    const known = choose(own, earlier ? await store.peek((r) => findOne(r, earlier.eventId)) : null);
    if (known) return store.view((r) => seen(r, known));
  } else {
    // An event remembered here: one statement finds it (the earlier one first, as it wins while it
    // holds). The request's own event stands only with the earlier one looked for beside it.
    for (const [eventId, isEarlier] of [...(earlier ? [[earlier.eventId, true] as const] : []), [request.eventId, false] as const]) {
      if (!remembersEvent(store, keyOf(eventId))) continue;
      const known = isEarlier ? choose(null, await store.peek((r) => findOne(r, eventId))) : await store.view(lookUp);
      if (known) return store.view((r) => seen(r, known));
    }
  }

  for (let attempt = 1; ; attempt++) {
    try {
      const reply = await store.transact(
        async (tx) => {
          // The ledger first: sent at once, answered before the first read `fresh` awaits. Where it
          // was looked for before the unit, again only for an earlier event (no index stops a second
          // record of it: two resends across midnight would both be new) or after losing a race (the
          // ledger's uniqueness stops the request's own).
          const looked = store.pipelined || attempt > 1 || earlier !== undefined ? lookUp(tx) : Promise.resolve(null);
          looked.catch(() => {});
          let work: Awaited<ReturnType<typeof handlers.fresh>>;
          try {
            work = await handlers.fresh(tx);
          } catch (error) {
            // A refusal (404, 422) or a failure of an event recorded already is answered as its replay.
            const known = await looked.catch(() => null);
            if (known) throw new KnownEvent(known);
            throw error;
          }
          const known = await looked;
          // Thrown before the unit's next statement: the writes `fresh` held back are never sent.
          if (known) throw new KnownEvent(known);
          // Recorded in the same unit as the work: both stand, or neither does.
          await tx.submissions.insert({
            integrationId: request.integrationId,
            endpoint: request.endpoint,
            eventId: request.eventId,
            fingerprint: fingerprint(request.body),
            body: request.body,
            needsReview: false,
            reviewReason: null,
            ...work.record,
          });
          return work;
        },
        (_tx, work) => work.reply(),
      );
      remember(request.eventId);
      return reply;
    } catch (error) {
      if (error instanceof KnownEvent) return store.view((r) => seen(r, error.known));
      if (error instanceof DuplicateEventError && attempt < MAX_FRESH_ATTEMPTS) continue;
      // A refusal (404, 422) of an event another writer recorded meanwhile is answered as that event's
      // replay (or 409), as it would have been had the event been found first; so is a unit the store
      // could not run (it takes no writes now) for an event it can still read; not after the server
      // was lost, when a read would only wait out its own timeout before the 503.
      const again = error instanceof AppError || (error instanceof StoreUnavailableError && error.mayRead);
      const meanwhile = again ? await store.view(lookUp).catch(() => null) : null;
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
