// The retry schedule: exponential ceilings with full jitter under them, a cap per step, a last attempt.
import { describe, expect, it } from 'vitest';
import {
  BASE_DELAY_MS,
  MAX_ATTEMPTS,
  MAX_DELAY_MS,
  RETRY_PERIOD_MAX_MS,
  givesUpAfter,
  nextAttemptAt,
  retryCeilingMs,
} from '../../src/webhooks/backoff.js';

const now = new Date('2026-12-01T10:00:00Z');
const waitAfter = (attempt: number, random: () => number) =>
  nextAttemptAt(attempt, now, random)!.getTime() - now.getTime();
const justBelowOne = () => 1 - Number.EPSILON;

describe('the wait after a failed attempt', () => {
  it('is drawn in full under a ceiling that doubles from the base', () => {
    expect(waitAfter(1, () => 0)).toBe(0);
    expect(waitAfter(1, () => 0.5)).toBe(BASE_DELAY_MS / 2);
    expect(waitAfter(1, justBelowOne)).toBe(BASE_DELAY_MS - 1);
    expect(waitAfter(2, () => 0.5)).toBe(BASE_DELAY_MS);
    expect(waitAfter(5, () => 0.5)).toBe(8 * BASE_DELAY_MS);
  });

  it('is never over the cap, however many attempts failed', () => {
    for (let attempt = 1; attempt < MAX_ATTEMPTS; attempt++) {
      expect(waitAfter(attempt, justBelowOne)).toBeLessThan(MAX_DELAY_MS);
      expect(retryCeilingMs(attempt)).toBeLessThanOrEqual(MAX_DELAY_MS);
    }
    expect(retryCeilingMs(MAX_ATTEMPTS - 1)).toBe(MAX_DELAY_MS);
    expect(retryCeilingMs(1000)).toBe(MAX_DELAY_MS);
  });

  it('refuses an attempt number below 1 or a random draw outside [0, 1)', () => {
    expect(() => nextAttemptAt(0, now)).toThrow(RangeError);
    expect(() => nextAttemptAt(1.5, now)).toThrow(RangeError);
    expect(() => nextAttemptAt(1, now, () => 1)).toThrow(RangeError);
    expect(() => nextAttemptAt(1, now, () => Number.NaN)).toThrow(RangeError);
  });
});

describe('giving up', () => {
  it(`comes after attempt ${MAX_ATTEMPTS}, and not before`, () => {
    for (let attempt = 1; attempt < MAX_ATTEMPTS; attempt++) {
      expect(givesUpAfter(attempt)).toBe(false);
      expect(nextAttemptAt(attempt, now)).not.toBeNull();
    }
    expect(givesUpAfter(MAX_ATTEMPTS)).toBe(true);
    expect(nextAttemptAt(MAX_ATTEMPTS, now)).toBeNull();
  });

  it('ends a schedule of 15 to 20 attempts spanning 3 days on average and at most RETRY_PERIOD_MAX_MS', () => {
    expect(MAX_ATTEMPTS).toBeGreaterThanOrEqual(15);
    expect(MAX_ATTEMPTS).toBeLessThanOrEqual(20);
    const span = (random: () => number) => {
      let at = now;
      let attempt = 1;
      for (let next = nextAttemptAt(attempt, at, random); next !== null; next = nextAttemptAt(++attempt, at, random))
        at = next;
      return { attempts: attempt, ms: at.getTime() - now.getTime() };
    };
    const day = 86_400_000;
    expect(span(() => 0.5).attempts).toBe(MAX_ATTEMPTS);
    // Each draw's mean is half its ceiling, so the mean period is half the longest one.
    expect(span(() => 0.5).ms).toBe(RETRY_PERIOD_MAX_MS / 2);
    expect(RETRY_PERIOD_MAX_MS / 2).toBeGreaterThanOrEqual(3 * day);
    expect(RETRY_PERIOD_MAX_MS / 2).toBeLessThan(3 * day + 3_600_000);
    expect(span(justBelowOne).ms).toBeLessThanOrEqual(RETRY_PERIOD_MAX_MS);
    expect(span(justBelowOne).ms).toBeGreaterThan(RETRY_PERIOD_MAX_MS - MAX_ATTEMPTS);
  });
});

describe('the spread of the period', () => {
  /** mulberry32: a seeded generator, so that the figures below are the same on every run. */
  function seeded(seed: number): () => number {
    let a = seed;
    return () => {
      a = (a + 0x6d2b79f5) | 0;
      let t = Math.imul(a ^ (a >>> 15), 1 | a);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
    };
  }

  it('is under 2 days for about 3 events in 100, under 1 day for fewer than 1 in 10,000 (as the docs say)', () => {
    const random = seeded(20_261_201);
    const day = 86_400_000;
    const events = 20_000;
    let underTwo = 0;
    let underOne = 0;
    for (let i = 0; i < events; i++) {
      let ms = 0;
      for (let attempt = 1; !givesUpAfter(attempt); attempt++) ms += waitAfter(attempt, random);
      if (ms < 2 * day) underTwo++;
      if (ms < day) underOne++;
    }
    expect(underTwo / events).toBeGreaterThan(0.02);
    expect(underTwo / events).toBeLessThan(0.045);
    expect(underOne / events).toBeLessThan(1 / 10_000);
  });
});
