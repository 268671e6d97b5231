// The events this process recorded or replayed lately, remembered per store where the ledger is looked
// up inside the unit (PostgreSQL, ledger.ts; SQLite looks every event up before its unit and keeps
// none): a resend of one of them is looked for alone, before any unit of work is opened.
//
// A hint, never a verdict: the ledger decides. An event remembered but not found (another database
// behind the same URL, a restore) goes the way of an unknown one, and an unknown one (recorded by
// another replica, or before a restart) is looked for inside its unit, in the unit's first round trip
// (replay.ts). Bounded in count and in age: the oldest entry goes first past the cap, and an entry
// older than the age is forgotten when next asked for (bench/results/LOG.md, "One unit, two round trips").
import type { Store } from '../store/store.js';

/** Events remembered per store at most (200 to 520 bytes each, by the event id's length: 2 to 5 MB at the cap). */
export const KNOWN_EVENTS_MAX = 10_000;
/** How long an event stays remembered after it was recorded or last replayed; resends come within minutes. */
export const KNOWN_EVENTS_TTL_MS = 15 * 60_000;

export interface KnownEventLimits {
  max: number;
  ttlMs: number;
}

interface Memory extends KnownEventLimits {
  /** Key -> when it is forgotten; a Map keeps insertion order, so its first entry is the oldest. */
  until: Map<string, number>;
}

const memories = new WeakMap<Store, Memory>();

function memoryOf(store: Store): Memory {
  let memory = memories.get(store);
  if (!memory) memories.set(store, (memory = { until: new Map(), max: KNOWN_EVENTS_MAX, ttlMs: KNOWN_EVENTS_TTL_MS }));
  return memory;
}

/** Sets the bounds of a store's memory (the defaults above otherwise), forgetting what it held. */
export function limitKnownEvents(store: Store, limits: KnownEventLimits): void {
  memories.set(store, { until: new Map(), ...limits });
}

/** Notes that the ledger holds this event (recorded or replayed just now). */
export function rememberEvent(store: Store, key: string, now = Date.now()): void {
  const memory = memoryOf(store);
  // Deleted first, so a replayed event moves to the end: the oldest is what the cap drops.
  memory.until.delete(key);
  memory.until.set(key, now + memory.ttlMs);
  while (memory.until.size > memory.max) memory.until.delete(memory.until.keys().next().value!);
}

/** Whether this event was recorded or replayed here within the memory's age. */
export function remembersEvent(store: Store, key: string, now = Date.now()): boolean {
  const memory = memories.get(store);
  const until = memory?.until.get(key);
  if (until === undefined) return false;
  if (until > now) return true;
  memory!.until.delete(key);
  return false;
}

/** How many events a store's memory holds now (expired ones included until asked for). */
export const knownEventCount = (store: Store): number => memories.get(store)?.until.size ?? 0;
