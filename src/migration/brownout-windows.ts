// Brownout windows set through the admin API, the CLI or the console (docs/runbook.md, "2b. Brownouts"),
// beside the windows of the rules: added and cancelled under the integration's lock, audited, and read
// by every replica's legacy gate from memory (a remembered read, forgotten on every change).
import { z } from 'zod';
import { AppError } from '../errors.js';
import { decodeCursor, encodeCursor } from '../http/cursor.js';
import type { Integration } from '../rules/catalog.js';
import { BROWNOUTS_PER_INTEGRATION_MAX, BrownoutSchema, type Brownout } from '../rules/brownouts.js';
import type { HotRead } from '../store/hot-reads.js';
import { newId } from '../store/ids.js';
import type { StoredBrownout } from '../store/repos/brownouts.js';
import type { Store } from '../store/store.js';
import { commitChange, move, type Actor, type MigrationDeps } from './service.js';

/** What the service team sends: the rules' own shape of a window (a start with its zone, its minutes). */
export const BrownoutInputSchema = BrownoutSchema;
export type BrownoutInput = z.infer<typeof BrownoutInputSchema>;

/** The id a window of the rules is listed under: it names the window, and cannot be cancelled here. */
const RULES_ID_PREFIX = 'rules:';

export const BrownoutEntrySchema = z
  .object({
    id: z
      .string()
      .meta({ description: 'A stored window: its id, to cancel it; a window of the rules: `rules:<start>`' }),
    source: z.enum(['rules', 'stored']).meta({
      description:
        '`rules`: `legacy.brownouts` in the rules; `stored`: set through the admin API, the CLI or the console',
    }),
    start: z.iso.datetime(),
    end: z.iso.datetime(),
    minutes: z.number().int(),
    status: z.enum(['past', 'running', 'scheduled']),
    created_by: z.string().nullable().meta({ description: 'Who set a stored window; null for the rules' }),
    created_at: z.iso.datetime().nullable(),
  })
  .meta({ id: 'BrownoutEntry' });
export type BrownoutEntry = z.infer<typeof BrownoutEntrySchema>;

export const BROWNOUTS_PAGE_DEFAULT = 50;
export const BROWNOUTS_PAGE_MAX = 100;

export const BrownoutPageQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(BROWNOUTS_PAGE_MAX).default(BROWNOUTS_PAGE_DEFAULT),
  after: z.string().max(2000).optional().meta({ description: 'The `next` of the page before' }),
});

export const BrownoutPageSchema = z
  .object({
    items: z.array(BrownoutEntrySchema),
    next: z.string().nullable().meta({ description: 'Give as `after` for the next page; null: the last page' }),
  })
  .meta({ id: 'BrownoutPage' });
export type BrownoutPage = z.infer<typeof BrownoutPageSchema>;

/** A stored window as the gate reads it. */
export const asWindow = (w: StoredBrownout): Brownout => ({
  start: w.start,
  end: w.end,
  startMs: Date.parse(w.start),
  endMs: Date.parse(w.end),
});

/**
 * The integration's stored windows, the earliest first, remembered a second and forgotten on every
 * change of this process or another (the gate's other reads share the check: `read`).
 */
export const storedWindows = (read: HotRead, store: Store, integrationId: string): Promise<Brownout[]> =>
  read(`brownouts:${integrationId}`, async () =>
    (await store.readOne((r) => r.brownouts.list(integrationId))).map(asWindow),
  );

/** Every window of the integration, the rules' and the stored ones, the earliest first. */
function entriesOf(integration: Integration, stored: readonly StoredBrownout[], nowMs: number): BrownoutEntry[] {
  const status = (w: Brownout) => (nowMs < w.startMs ? 'scheduled' : nowMs < w.endMs ? 'running' : 'past');
  const fromRules = integration.legacy.brownouts.map((w): BrownoutEntry => ({
    id: `${RULES_ID_PREFIX}${w.start}`,
    source: 'rules',
    start: w.start,
    end: w.end,
    minutes: Math.round((w.endMs - w.startMs) / 60_000),
    status: status(w),
    created_by: null,
    created_at: null,
  }));
  const fromStore = stored.map((w): BrownoutEntry => ({
    id: w.id,
    source: 'stored',
    start: w.start,
    end: w.end,
    minutes: w.minutes,
    status: status(asWindow(w)),
    created_by: w.createdBy,
    created_at: w.createdAt,
  }));
  return [...fromRules, ...fromStore].sort((a, b) =>
    a.start !== b.start ? (a.start < b.start ? -1 : 1) : a.id < b.id ? -1 : 1,
  );
}

const CURSOR = ['start', 'id'] as const;

/** One page of the integration's windows, the earliest first. */
export async function listBrownouts(
  deps: MigrationDeps,
  integration: Integration,
  page: { limit: number; after?: string | undefined },
): Promise<BrownoutPage> {
  const after = page.after === undefined ? null : decodeCursor(CURSOR, page.after);
  const now = deps.now?.() ?? new Date();
  const stored = await deps.store.readOne((r) => r.brownouts.list(integration.id));
  const all = entriesOf(integration, stored, now.getTime()).filter(
    (e) => after === null || e.start > after.start || (e.start === after.start && e.id > after.id),
  );
  const items = all.slice(0, page.limit);
  const last = items.at(-1);
  return { items, next: all.length > page.limit && last ? encodeCursor(CURSOR, last) : null };
}

const invalid = (path: string, message: string) =>
  new AppError('validation-failed', `${path}: ${message}`, { errors: [{ path, message }] });

/**
 * Adds a window; audited `brownout_added`. Refused: a start in the past (422), an integration switched
 * off, a window overlapping another of the rules or stored (409 conflict), one more than
 * BROWNOUTS_PER_INTEGRATION_MAX windows of the rules and stored together (409 limit-reached).
 */
export async function addBrownout(
  deps: MigrationDeps,
  integration: Integration,
  input: BrownoutInput & Actor,
): Promise<BrownoutEntry> {
  const now = deps.now?.() ?? new Date();
  const startMs = Date.parse(input.start);
  if (startMs < now.getTime()) throw invalid('/start', `is in the past (now is ${now.toISOString()})`);
  const window: StoredBrownout = {
    id: newId(),
    integrationId: integration.id,
    start: new Date(startMs).toISOString(),
    minutes: input.minutes,
    end: new Date(startMs + input.minutes * 60_000).toISOString(),
    createdBy: input.actor,
    createdAt: now.toISOString(),
  };
  return commitChange(deps.store, integration.id, async (tx) => {
    const state = await tx.states.get(integration.id);
    if (state === 'switched_off')
      throw new AppError(
        'conflict',
        `${integration.handle} is switched off: its legacy key is refused already, and a brownout never runs on it.`,
        { state },
      );
    const existing = entriesOf(integration, await tx.brownouts.list(integration.id), now.getTime());
    if (existing.length >= BROWNOUTS_PER_INTEGRATION_MAX)
      throw new AppError(
        'limit-reached',
        `${integration.handle} has ${existing.length} brownout windows (the rules' and stored), the most it may have ` +
          `(${BROWNOUTS_PER_INTEGRATION_MAX}): cancel one, or wait until retention removes those that ended.`,
        { max: BROWNOUTS_PER_INTEGRATION_MAX },
      );
    const overlap = existing.find((w) => w.start < window.end && window.start < w.end);
    if (overlap)
      throw new AppError(
        'conflict',
        `The window overlaps the window from ${overlap.start} to ${overlap.end} (${overlap.source === 'rules' ? 'set in the rules' : `set by ${overlap.created_by}`}).`,
        { overlaps: { id: overlap.id, source: overlap.source, start: overlap.start, end: overlap.end } },
      );
    await tx.brownouts.insert(window);
    await move(tx, integration, 'brownout_added', null, input, window.createdAt, {
      id: window.id,
      start: window.start,
      end: window.end,
      minutes: window.minutes,
    });
    return entriesOf(integration, [window], now.getTime()).find((e) => e.id === window.id)!;
  });
}

/**
 * Cancels a stored window, whether it is to come, running (it ends now) or ended (it leaves the list
 * early; its refused calls stay in the report); audited `brownout_cancelled`. A window of the rules is
 * refused (409): it is removed from the rules. An id the integration has no window of is a 404.
 */
export async function cancelBrownout(
  deps: MigrationDeps,
  integration: Integration,
  id: string,
  who: Actor,
): Promise<BrownoutEntry> {
  const now = deps.now?.() ?? new Date();
  if (id.startsWith(RULES_ID_PREFIX) && integration.legacy.brownouts.some((w) => `${RULES_ID_PREFIX}${w.start}` === id))
    throw new AppError(
      'conflict',
      `The window ${id.slice(RULES_ID_PREFIX.length)} is set in the rules (legacy.brownouts): remove it from the ` +
        `rules file and reload the rules to cancel it.`,
      { source: 'rules' },
    );
  return commitChange(deps.store, integration.id, async (tx) => {
    const window = (await tx.brownouts.list(integration.id)).find((w) => w.id === id);
    if (!window || !(await tx.brownouts.remove(integration.id, id)))
      throw new AppError('not-found', `${integration.handle} has no brownout window ${id}.`);
    const entry = entriesOf(integration, [window], now.getTime()).find((e) => e.id === id)!;
    await move(tx, integration, 'brownout_cancelled', null, who, now.toISOString(), {
      id,
      start: window.start,
      end: window.end,
      why: `cancelled by ${who.actor}`,
    });
    return entry;
  });
}

/** The sentence the CLI and the console say of a window. */
export function brownoutEntrySentence(e: BrownoutEntry): string {
  const when = `${e.start.slice(0, 16).replace('T', ' ')} UTC`;
  const source = e.source === 'rules' ? 'set in the rules' : `set by ${e.created_by}`;
  return `${e.status === 'past' ? 'Past' : e.status === 'running' ? 'Running' : 'Scheduled'}: ${when}, ${e.minutes} min, ${source} (${e.id}).`;
}
