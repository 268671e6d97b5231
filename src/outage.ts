// A store outage logged as one episode: a line when it starts (with one stack per distinct cause) and
// a line when the store is back, with what it refused; not a stack per refused request.
import type { FastifyBaseLogger } from 'fastify';
import type { Store, StoreUnavailableError } from './store/store.js';

/**
 * No refusal for this long, and a readiness write that commits: the outage is over. Long enough that
 * a store failing every few requests (a table locked past the statement limit, a restart) stays one
 * outage; short enough that its end is logged soon after the store is back.
 */
export const OUTAGE_QUIET_MS = 2_000;
/** Distinct causes (engine code and message) logged with their stack in one outage; later ones are counted as `other`. */
export const OUTAGE_CAUSES_LOGGED = 10;

interface Cause {
  engine_code: string | null;
  message: string;
  refused: number;
}

export interface StoreOutage {
  /** A request was answered 503 because the store failed: logs the outage's start or a new cause, else only counts. */
  refused(error: StoreUnavailableError, log: FastifyBaseLogger): void;
  /** Stops the check for the outage's end (the app closes). */
  close(): void;
}

/** One per app (buildApp): the outage state of this process's store. */
/** Where refusals are counted, by the engine's code (the metrics' `storeUnavailable` counter). */
interface RefusalCounter {
  inc(labels: { engine_code: string }): void;
}

export function storeOutage(deps: {
  store: Pick<Store, 'checkReady'>;
  log: FastifyBaseLogger;
  refusals: RefusalCounter;
  quietMs?: number;
}): StoreOutage {
  const quietMs = deps.quietMs ?? OUTAGE_QUIET_MS;
  let outage: {
    startedAt: number;
    lastRefusalAt: number;
    refused: number;
    causes: Map<string, Cause>;
    other: number;
  } | null = null;
  let timer: NodeJS.Timeout | null = null;
  let checking = false;

  const quiet = () => outage !== null && Date.now() - outage.lastRefusalAt >= quietMs;
  const end = () => {
    if (outage === null || !quiet()) return;
    const { startedAt, lastRefusalAt, refused, causes, other } = outage;
    deps.log.info(
      {
        refused,
        duration_ms: lastRefusalAt - startedAt,
        causes: [...causes.values()],
        ...(other > 0 ? { other_causes_refused: other } : {}),
      },
      'store available again',
    );
    outage = null;
    if (timer) clearInterval(timer);
    timer = null;
  };
  // Quiet is not enough (no traffic refuses nothing): a readiness write must commit too.
  const check = () => {
    if (checking || !quiet()) return;
    checking = true;
    deps.store
      .checkReady()
      .then(end, () => undefined)
      .finally(() => (checking = false));
  };

  return {
    refused(error, log) {
      deps.refusals.inc({ engine_code: error.engineCode ?? 'none' });
      const key = `${error.engineCode}\0${error.message}`;
      const now = Date.now();
      if (outage === null) {
        outage = { startedAt: now, lastRefusalAt: now, refused: 0, causes: new Map(), other: 0 };
        timer = setInterval(check, quietMs).unref();
      }
      outage.refused++;
      outage.lastRefusalAt = now;
      const cause = outage.causes.get(key);
      if (cause) cause.refused++;
      else if (outage.causes.size >= OUTAGE_CAUSES_LOGGED) outage.other++;
      else {
        outage.causes.set(key, { engine_code: error.engineCode, message: error.message, refused: 1 });
        log.error(
          { err: error, engine_code: error.engineCode },
          outage.causes.size === 1 ? 'store unavailable' : 'store unavailable, another cause',
        );
        return;
      }
      log.debug({ engine_code: error.engineCode }, 'storage failure');
    },
    close() {
      if (timer) clearInterval(timer);
      timer = null;
    },
  };
}
