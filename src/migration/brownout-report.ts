// The brownout windows in the migration report: each window of the integration's rules and each stored
// one (set through the admin API), and the windows counted but no longer in effect, with the legacy
// calls refused in it, per route.
import { z } from 'zod';
import type { Brownout } from '../rules/brownouts.js';
import type { BrownoutRefusal } from '../store/repos/states.js';

export const BrownoutWindowSchema = z
  .object({
    start: z.iso.datetime(),
    end: z.iso
      .datetime()
      .nullable()
      .meta({ description: 'Null for a window no longer in effect (removed from the rules, or cancelled)' }),
    status: z.enum(['past', 'running', 'scheduled']),
    refused_calls: z.number().int().meta({ description: 'Legacy calls refused in this window, every route' }),
    last_refused: z.iso.datetime().nullable(),
    routes: z.array(z.object({ route: z.string(), calls: z.number().int() })),
  })
  .meta({ id: 'BrownoutWindow' });

export const BrownoutsSchema = z.array(BrownoutWindowSchema).meta({
  description:
    "The integration's brownout windows (its rules' `legacy.brownouts`, else its workspace's, and those set through " +
    'POST .../brownouts) in the order they start, with the legacy calls refused in each; a window no longer in effect ' +
    'is listed while refusals of it are counted',
});
export type BrownoutWindow = z.infer<typeof BrownoutWindowSchema>;

export function brownoutsView(
  windows: readonly Brownout[],
  refused: readonly Omit<BrownoutRefusal, 'integrationId'>[],
  now: Date,
): BrownoutWindow[] {
  const at = now.getTime();
  const byStart = new Map<string, BrownoutWindow>();
  for (const w of windows)
    byStart.set(w.start, {
      start: w.start,
      end: w.end,
      status: at < w.startMs ? 'scheduled' : at < w.endMs ? 'running' : 'past',
      refused_calls: 0,
      last_refused: null,
      routes: [],
    });
  for (const r of refused) {
    let entry = byStart.get(r.windowStart);
    if (!entry)
      byStart.set(
        r.windowStart,
        (entry = { start: r.windowStart, end: null, status: 'past', refused_calls: 0, last_refused: null, routes: [] }),
      );
    entry.refused_calls += r.calls;
    if (entry.last_refused === null || r.lastAt > entry.last_refused) entry.last_refused = r.lastAt;
    entry.routes.push({ route: r.route, calls: r.calls });
  }
  return [...byStart.values()].sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
}

/** The sentence the console and the CLI show for a window: what a bot's people saw in it. */
export function brownoutSentence(w: BrownoutWindow): string {
  const when = `${w.start.slice(0, 16).replace('T', ' ')} UTC`;
  if (w.status === 'scheduled') return `A brownout is scheduled at ${when}.`;
  const calls = `${w.refused_calls} call${w.refused_calls === 1 ? '' : 's'} from this bot`;
  return w.status === 'running'
    ? `A brownout is running since ${when}: ${calls} refused so far.`
    : `${calls} ${w.refused_calls === 1 ? 'was' : 'were'} refused in the brownout of ${when}.`;
}
