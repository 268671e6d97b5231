// Where an event is looked for in the ledger, per engine: at the engine's cheapest place
// (docs/architecture.md, "The unit of work"). The ledger decides; the place is only a cost.
//
// - SQLite: before the unit, each look-up a statement of its own on the writer between units (a
//   `readOne`): a resend is answered without entering the one writer's queue. Inside the unit only for an
//   earlier event (no index stops a second record of it) or after a lost race.
// - PostgreSQL: a read costs a round trip there, and a unit's first statements share one: an event this
//   process recorded or replayed lately (known-events.ts) is looked for alone before the unit, every
//   other inside the unit, with BEGIN, the person locks and the match.
import type { Repos, Store, StoreEngine } from '../store/store.js';
import { rememberEvent, remembersEvent } from './known-events.js';

/** The look-ups of one request, as replay.ts makes them: the recorded event it is, or null. */
export interface EventLookUps<K> {
  /** Its own event_id alone (one statement). */
  own: (r: Repos) => Promise<K | null>;
  /** Its earlier event alone (one statement), when it has one: found, it wins while it holds. */
  earlier: ((r: Repos) => Promise<K | null>) | null;
  /** Both at once (two statements; one round trip on PostgreSQL), the earlier winning while it holds. */
  both: (r: Repos) => Promise<K | null>;
  /** The ledger key of an event id, for the memory of known events. */
  keyOf: (eventId: string) => string;
  eventId: string;
  earlierId: string | null;
}

export interface LedgerPlace {
  /** The recorded event found before the unit, or null: the unit runs (and may look for it itself). */
  before<K>(store: Store, lookUps: EventLookUps<K>): Promise<K | null>;
  /** Whether the unit's attempt looks the event up itself, beside its work. */
  inside(attempt: number, hasEarlier: boolean): boolean;
  /** Told of an event the ledger holds now (recorded or replayed), for this process's next resend. */
  held(store: Store, key: string): void;
}

const beforeTheUnit: LedgerPlace = {
  before: async (store, l) => (l.earlier ? await store.readOne(l.earlier) : null) ?? store.readOne(l.own),
  inside: (attempt, hasEarlier) => attempt > 1 || hasEarlier,
  held: () => {},
};

const insideTheUnit: LedgerPlace = {
  before: async (store, l) => {
    // The earlier event first, as it wins while it holds; the request's own stands only with the
    // earlier one looked for beside it.
    if (l.earlier && l.earlierId !== null && remembersEvent(store, l.keyOf(l.earlierId))) {
      const known = await store.readOne(l.earlier);
      if (known) return known;
    }
    return remembersEvent(store, l.keyOf(l.eventId)) ? store.readCommitted(l.both) : null;
  },
  inside: () => true,
  held: (store, key) => rememberEvent(store, key),
};

/** The place each engine looks its events up. */
export const LEDGER_PLACES: Record<StoreEngine, LedgerPlace> = { sqlite: beforeTheUnit, postgres: insideTheUnit };
