// Brownout windows: short, announced moments in which an integration's legacy key is refused as if
// the old interface were switched off, so that the people behind a bot nobody maintains see the
// refusals in their own logs before the real switch-off (docs/migration.md, "Brownouts"). Set in the
// rules, each replica reads them from its rules and its clock: a window starts and ends on every
// replica at once, within the replicas' clock skew (docs/operations/limits.md, "Clock skew between replicas").
import { z } from 'zod';

/** The longest window, in minutes: a brownout warns, it does not switch off. */
export const BROWNOUT_MINUTES_MAX = 240;
/** Most windows per integration (or in the workspace's default list). */
export const BROWNOUTS_PER_INTEGRATION_MAX = 20;

export const BrownoutSchema = z.strictObject({
  start: z.iso
    .datetime({ offset: true, error: 'must be a date and time with its zone, e.g. 2026-12-02T10:00:00Z' })
    .meta({ description: 'When the window starts: an ISO 8601 date and time with its zone (Z or ±hh:mm)' }),
  minutes: z
    .number()
    .int()
    .min(1)
    .max(BROWNOUT_MINUTES_MAX)
    .meta({ description: `How long the window lasts, in whole minutes (at most ${BROWNOUT_MINUTES_MAX})` }),
});

export const BrownoutListSchema = z
  .array(BrownoutSchema)
  .max(BROWNOUTS_PER_INTEGRATION_MAX, `at most ${BROWNOUTS_PER_INTEGRATION_MAX} brownout windows`)
  .superRefine((list, ctx) => {
    const windows = list.map((w, index) => ({ index, ...window(w) })).sort((a, b) => a.startMs - b.startMs);
    for (let i = 1; i < windows.length; i++) {
      const [before, after] = [windows[i - 1]!, windows[i]!];
      if (after.startMs < before.endMs)
        ctx.addIssue({
          code: 'custom',
          path: [after.index, 'start'],
          message: `overlaps the window from ${before.start} to ${before.end}`,
        });
    }
  })
  .meta({ description: 'Brownout windows: every call with the legacy key inside one is refused with 403' });

/** A window as the gate reads it: its bounds as ISO text (UTC) and as milliseconds. */
export interface Brownout {
  start: string;
  end: string;
  startMs: number;
  endMs: number;
}

function window(w: z.infer<typeof BrownoutSchema>): Brownout {
  const startMs = Date.parse(w.start);
  const endMs = startMs + w.minutes * 60_000;
  return { start: new Date(startMs).toISOString(), end: new Date(endMs).toISOString(), startMs, endMs };
}

/** The windows of a valid list, in the order they start. */
export const brownoutWindows = (list: readonly z.infer<typeof BrownoutSchema>[]): Brownout[] =>
  list.map(window).sort((a, b) => a.startMs - b.startMs);

/** The window `nowMs` falls in (its start included, its end not), or null. */
export function brownoutAt(windows: readonly Brownout[], nowMs: number): Brownout | null {
  for (const w of windows) {
    if (nowMs < w.startMs) return null;
    if (nowMs < w.endMs) return w;
  }
  return null;
}

/** The next window that has not ended at `nowMs`, or null. */
export const nextBrownout = (windows: readonly Brownout[], nowMs: number): Brownout | null =>
  windows.find((w) => nowMs < w.endMs) ?? null;
