// Counts calls per integration, interface and route, when each key was last used, and the answers
// calls answered 404 per person; flushed to the store in one unit of work.
import type { FastifyBaseLogger } from 'fastify';
import type { Repos, Store } from '../store/store.js';
import { aboutIntegration, writeEvent } from '../webhooks/outbox.js';
import { logTold, tellLegacyAfterPorted, type IntegrationOf, type PortedMarks } from './after-ported.js';
import type {
  BrownoutRefusal,
  Interface,
  LegacySample,
  NotFoundIncrement,
  UsageIncrement,
} from '../store/repos/states.js';

/** Distinct ignored member names counted per request: a body of 100,000 unknown members counts 50. */
export const IGNORED_NAMES_MAX_PER_REQUEST = 50;
/** Distinct ignored member names kept per integration; later new names are not counted (docs/legacy-api.md). */
export const IGNORED_NAMES_MAX_PER_INTEGRATION = 1_000;
/** Longer names are counted cut to this length (the report names members, it does not store bodies). */
export const IGNORED_NAME_MAX_CHARS = 64;

/** Distinct external_contact_ids whose answers 404s an integration keeps; a further id is not listed (docs/operations/limits.md). */
export const NOT_FOUND_IDS_PER_INTEGRATION = 1_000;
/**
 * Distinct ids (all integrations) counted in memory between two flushes: a further new id waits for
 * the next flush's memory, and is not counted. At the flush's pace this is 40,000 distinct 404s a
 * second, far above what the rate limits let through.
 */
export const NOT_FOUND_PENDING_MAX = 10_000;

/**
 * Rows (brownout window and route) of refused calls an integration keeps: 20 windows in its rules at a
 * time and some 20 routes; rows of windows the rules no longer list stay until retention deletes them.
 * A further row is not counted (docs/operations/limits.md).
 */
export const BROWNOUT_ROWS_PER_INTEGRATION = 1_000;
/** Distinct (integration, window, route) counted in memory between two flushes, as NOT_FOUND_PENDING_MAX. */
export const BROWNOUT_PENDING_MAX = 10_000;

export interface UsageCaps {
  notFoundIdsPerIntegration: number;
  notFoundPending: number;
  brownoutRowsPerIntegration: number;
  brownoutPending: number;
}

export const USAGE_CAPS: UsageCaps = {
  notFoundIdsPerIntegration: NOT_FOUND_IDS_PER_INTEGRATION,
  notFoundPending: NOT_FOUND_PENDING_MAX,
  brownoutRowsPerIntegration: BROWNOUT_ROWS_PER_INTEGRATION,
  brownoutPending: BROWNOUT_PENDING_MAX,
};

/** The names one request contributes to the report: distinct, cut, and at most a fixed number. */
export function boundedIgnoredNames(fields: readonly string[]): string[] {
  const names = new Set<string>();
  for (const field of fields) {
    if (names.size >= IGNORED_NAMES_MAX_PER_REQUEST) break;
    names.add(field.length > IGNORED_NAME_MAX_CHARS ? `${field.slice(0, IGNORED_NAME_MAX_CHARS - 1)}…` : field);
  }
  return [...names];
}

export interface UsageRecorder {
  /**
   * Counts a call; `ok` when it was answered with a 2xx (the readiness verdict counts only those).
   * `keyId`: the key that authenticated it, whose "last used" moves to `at`.
   */
  record(integrationId: string, iface: Interface, route: string, ok: boolean, at?: Date, keyId?: string | null): void;
  /**
   * Counts legacy request members the gateway ignored (stage, tags without a rule, unknown ones), for a
   * request that succeeded; bounded per request (boundedIgnoredNames).
   */
  recordIgnored(integrationId: string, fields: readonly string[], at?: Date): void;
  /**
   * Counts an answers call answered 404 (no lead of this person through the integration) for the
   * service team's list, per external_contact_id; bounded (UsageCaps).
   */
  recordNotFound(integrationId: string, externalContactId: string, at?: Date): void;
  /**
   * Counts a legacy call refused in the brownout window that starts at `windowStart`, apart from the
   * others (it is counted by `record` too: a bot that called in a brownout is alive); bounded (UsageCaps).
   */
  recordBrownout(integrationId: string, windowStart: string, route: string, at?: Date): void;
  /** The bounds it counts within. */
  readonly caps: UsageCaps;
  /**
   * Whether a sample of this route is wanted now: none is held for it since the last flush. Lets the
   * caller skip redacting a body nobody keeps.
   */
  wantsSample(integrationId: string, route: string): boolean;
  /** Holds one redacted call of a route (src/porting/), written with the next flush; a later one replaces it. */
  recordSample(sample: LegacySample): void;
  /** Writes what was counted so far; the switch-off check and the report call it first. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

/**
 * How often counted calls are written. Short enough that a replica killed a second after its last
 * calls has written them (the migration report and the switch-off quiet period read every replica's
 * counts from the database); a flush of a few rows four times a second costs nothing measurable.
 */
export const USAGE_FLUSH_MS = 250;

/** The time as ISO text, formatted once per millisecond: every counted request asks for it. */
let lastMs = -1;
let lastIso = '';
const isoNow = (): string => {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
};

/**
 * Counting is off the request's own unit of work (reads have none) and off its critical path: counts
 * gather in memory and are written together every `intervalMs`. A crash loses at most that much
 * counting, never a request.
 */
export function createUsageRecorder(
  store: Store,
  intervalMs = USAGE_FLUSH_MS,
  caps: UsageCaps = USAGE_CAPS,
  log?: FastifyBaseLogger,
  /** The rules' integration of an id: the events the flush writes name it (after-ported.ts). */
  integrationOf?: IntegrationOf,
): UsageRecorder {
  const portedMarks: PortedMarks = { byIntegration: new Map(), readAt: -Infinity };
  let pending = new Map<string, UsageIncrement>();
  let notFound = new Map<string, NotFoundIncrement>();
  let brownouts = new Map<string, BrownoutRefusal>();
  let ignored: { integrationId: string; fields: readonly string[]; at: string }[] = [];
  let keysUsed = new Map<string, string>();
  let samples = new Map<string, LegacySample>();
  // Commits run one after another. Counts are taken from memory at the call, and every flush resolves
  // only once the commits before it are done: one that finds memory empty while another's counts are
  // still being written waits for them, so the report (and the switch-off check) never reads early.
  let committing: Promise<void> = Promise.resolve();
  const flush = (): Promise<void> => {
    if (
      pending.size === 0 &&
      ignored.length === 0 &&
      keysUsed.size === 0 &&
      notFound.size === 0 &&
      samples.size === 0 &&
      brownouts.size === 0
    )
      return committing.catch(() => undefined);
    const batch = [...pending.values()];
    const missed = [...notFound.values()];
    notFound = new Map();
    const refused = [...brownouts.values()];
    brownouts = new Map();
    const fields = ignored;
    const uses = [...keysUsed].map(([keyId, at]) => ({ keyId, at }));
    pending = new Map();
    ignored = [];
    keysUsed = new Map();
    const kept = [...samples.values()];
    samples = new Map();
    committing = committing
      .catch(() => undefined)
      .then(() =>
        store
          .transact(async (tx) => {
            await tx.states.addUsage(batch);
            await tx.keys.markUsed(uses);
            for (const f of fields)
              await tx.states.countIgnored(f.integrationId, f.fields, f.at, IGNORED_NAMES_MAX_PER_INTEGRATION);
            if (missed.length > 0)
              await tellNotFoundListed(
                tx,
                await tx.states.countNotFound(missed, caps.notFoundIdsPerIntegration),
                integrationOf,
              );
            if (kept.length > 0) await tx.states.putSamples(kept);
            if (refused.length > 0) await tx.states.countBrownoutRefusals(refused, caps.brownoutRowsPerIntegration);
            return tellLegacyAfterPorted(tx, batch, portedMarks, new Date(), integrationOf);
          })
          .then((told) => logTold(log, told)),
      );
    return committing;
  };
  const timer = setInterval(() => void flush().catch(() => undefined), intervalMs);
  timer.unref();
  return {
    caps,
    record(integrationId, iface, route, ok, at, keyId = null) {
      const iso = at === undefined ? isoNow() : at.toISOString();
      if (keyId !== null) keysUsed.set(keyId, iso);
      const hour = iso.slice(0, 13);
      const key = `${integrationId}|${iface}|${route}|${hour}`;
      let entry = pending.get(key);
      if (!entry)
        pending.set(
          key,
          (entry = { integrationId, interface: iface, route, hour, calls: 0, lastSeen: iso, okCalls: 0, lastOk: null }),
        );
      entry.calls++;
      entry.lastSeen = iso;
      if (ok) {
        entry.okCalls++;
        entry.lastOk = iso;
      }
    },
    recordIgnored(integrationId, fields, at = new Date()) {
      if (fields.length > 0) ignored.push({ integrationId, fields: boundedIgnoredNames(fields), at: at.toISOString() });
    },
    recordNotFound(integrationId, externalContactId, at) {
      const iso = at === undefined ? isoNow() : at.toISOString();
      const key = `${integrationId}\u0000${externalContactId}`;
      const entry = notFound.get(key);
      if (entry) {
        entry.calls++;
        if (iso > entry.lastAt) entry.lastAt = iso;
        if (iso < entry.firstAt) entry.firstAt = iso;
      } else if (notFound.size < caps.notFoundPending) {
        notFound.set(key, { integrationId, externalContactId, calls: 1, firstAt: iso, lastAt: iso });
      }
    },
    recordBrownout(integrationId, windowStart, route, at) {
      const iso = at === undefined ? isoNow() : at.toISOString();
      const key = `${integrationId}\u0000${windowStart}\u0000${route}`;
      const entry = brownouts.get(key);
      if (entry) {
        entry.calls++;
        if (iso > entry.lastAt) entry.lastAt = iso;
      } else if (brownouts.size < caps.brownoutPending) {
        brownouts.set(key, { integrationId, windowStart, route, calls: 1, lastAt: iso });
      }
    },
    wantsSample: (integrationId, route) => !samples.has(`${integrationId}|${route}`),
    recordSample(sample) {
      samples.set(`${sample.integrationId}|${sample.route}`, sample);
    },
    flush,
    async close() {
      clearInterval(timer);
      await flush();
    },
  };
}

/**
 * The answers 404 list gained ids (`added`, as countNotFound answers): one `answers.unknown_id_listed`
 * event per integration in the flush's unit, counting them; the ids themselves stay in the list, read
 * with the service team's or the owner's credentials.
 */
async function tellNotFoundListed(
  tx: Repos,
  added: readonly NotFoundIncrement[],
  integrationOf: IntegrationOf | undefined,
): Promise<void> {
  const perIntegration = new Map<string, number>();
  for (const a of added) perIntegration.set(a.integrationId, (perIntegration.get(a.integrationId) ?? 0) + 1);
  const at = isoNow();
  for (const [integrationId, listed] of perIntegration) {
    const integration = integrationOf?.(integrationId);
    if (integration)
      await writeEvent(
        tx,
        'answers.unknown_id_listed',
        integration.workspace.id,
        { ...aboutIntegration(integration), listed },
        at,
      );
  }
}
