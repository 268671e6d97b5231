// When a failed delivery is tried again: exponential backoff with full jitter, capped per step, and
// a fixed number of attempts after which the event is given up.

/** The first retry's ceiling; each retry's ceiling doubles from it. */
export const BASE_DELAY_MS = 60_000;
/** No wait between two attempts is longer: a receiver back from an outage hears again within this. */
export const MAX_DELAY_MS = 16 * 3_600_000;
/**
 * Attempts of one event in all, the first included. With the two figures above, the ceilings of the
 * 18 waits add up to RETRY_PERIOD_MAX_MS (6 days and about an hour); each wait being drawn uniformly
 * under its ceiling, the period from first to last attempt is 3 days on average.
 */
export const MAX_ATTEMPTS = 19;

/** The ceiling of the wait after attempt `attemptNumber` (1-based): BASE_DELAY_MS doubled, capped. */
export function retryCeilingMs(attemptNumber: number): number {
  assertAttemptNumber(attemptNumber);
  // 2 ** 30 and beyond is far past the cap; the exponent is bounded so the product stays exact.
  return Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** Math.min(attemptNumber - 1, 30));
}

/** The longest the retries of one event can take: every wait at its ceiling. */
export const RETRY_PERIOD_MAX_MS: number = Array.from({ length: MAX_ATTEMPTS - 1 }, (_, i) =>
  retryCeilingMs(i + 1),
).reduce((a, b) => a + b, 0);

/** Whether attempt `attemptNumber`, having failed, is the last one: the event is then given up. */
export function givesUpAfter(attemptNumber: number): boolean {
  assertAttemptNumber(attemptNumber);
  return attemptNumber >= MAX_ATTEMPTS;
}

/**
 * When to make the next attempt after attempt `attemptNumber` failed at `now`, or null when it was
 * the last. Full jitter (a uniform draw between now and the step's ceiling) spreads the retries of
 * many events that failed together, as after a receiver's outage, instead of sending them in waves.
 * `random` answers in [0, 1), as Math.random does; tests pass their own.
 */
export function nextAttemptAt(attemptNumber: number, now: Date, random: () => number = Math.random): Date | null {
  if (givesUpAfter(attemptNumber)) return null;
  const draw = random();
  if (!(draw >= 0 && draw < 1)) throw new RangeError(`random() answered ${draw}, outside [0, 1)`);
  return new Date(now.getTime() + Math.floor(draw * retryCeilingMs(attemptNumber)));
}

function assertAttemptNumber(attemptNumber: number): void {
  if (!Number.isSafeInteger(attemptNumber) || attemptNumber < 1) {
    throw new RangeError(`attempts are numbered from 1, not ${attemptNumber}`);
  }
}
