// The live persons that test calls found (docs/api.md, "Test mode"): recorded after each such call's
// rolled-back unit, before it is answered, and read page by page by the service team (admin API,
// CLI, console).
import { z } from 'zod';
import { AppError } from '../errors.js';
import type { Integration } from '../rules/catalog.js';
import type { Store } from '../store/store.js';
import type { TestMatch, TestMatchCursor } from '../store/repos/test-matches.js';
import type { MigrationDeps } from './service.js';
import { decodeCursor, encodeCursor } from '../http/cursor.js';

/**
 * Rows (persons) kept per test key. A bot author tests against a handful of persons; a test key that
 * has found this many distinct ones within the retention is sweeping the workspace, and its next call
 * that finds a person not yet recorded is refused (409 limit-reached) before anything of that person
 * is answered. Calls that find a person already recorded go on being counted on its row, and the
 * integration's other test keys are not held back.
 */
export const TEST_MATCHES_MAX_PER_KEY = 1_000;
export const TEST_MATCHES_PAGE_DEFAULT = 50;
export const TEST_MATCHES_PAGE_MAX = 500;

/**
 * Records one test call that found a live person, under the integration's lock (two replicas cannot
 * both add the last row under the cap). Past the cap nothing is written and the call gets the problem
 * instead of its answer: no test call discloses a person without a record of it.
 */
export async function recordTestMatch(store: Store, match: TestMatch): Promise<void> {
  const kept = await store.transact(async (tx) => {
    await tx.locks.integration(match.integrationId);
    return tx.testMatches.record(match, TEST_MATCHES_MAX_PER_KEY);
  });
  if (!kept) {
    throw new AppError(
      'limit-reached',
      `Test calls with this key have found ${TEST_MATCHES_MAX_PER_KEY} different persons within the retention period, ` +
        'the most the gateway records for one key: a call that finds another one is refused. Test against persons found before, or ask the service team for another test key.',
      { limit: TEST_MATCHES_MAX_PER_KEY },
    );
  }
}

/** What a test call's service gives `runOnce` (idempotency/replay.ts): records the person its unit found. */
export function testMatchRecorder(
  store: Store,
  integration: Pick<Integration, 'id'>,
  keyId: string,
  endpoint: TestMatch['endpoint'],
  eventId: string,
  now: () => string,
) {
  return (person: Pick<TestMatch, 'contactId' | 'leadId' | 'matchedBy' | 'own'>) =>
    recordTestMatch(store, { ...person, integrationId: integration.id, keyId, endpoint, eventId, at: now() });
}

export const TestMatchSchema = z
  .object({
    key_id: z.string().meta({ description: 'The test key that made the calls' }),
    key_prefix: z
      .string()
      .nullable()
      .meta({ description: "The key's readable prefix (null: the key is no longer listed)" }),
    contact_id: z.string().meta({ description: 'The person found' }),
    lead_id: z
      .string()
      .nullable()
      .meta({ description: "The person's lead the last call would have joined or answered (null: none)" }),
    own: z.boolean().meta({
      description:
        "Whether the integration had submitted the person itself (false: another integration's or an operator's person, shown to the test call as unknown)",
    }),
    endpoint: z.enum(['leads', 'answers']).meta({ description: 'The v1 route of the last call' }),
    matched_by: z.enum(['external_contact_id', 'phone', 'email']),
    last_event_id: z.string().meta({ description: 'The event_id of the last call, as the bot sent it' }),
    calls: z.number().int(),
    first_at: z.iso.datetime(),
    last_at: z.iso.datetime(),
  })
  .meta({ id: 'TestMatch', description: 'Test calls of one test key that found one live person' });

export const TestMatchPageSchema = z
  .object({
    items: z.array(TestMatchSchema),
    next: z.string().nullable().meta({ description: 'Give as `after` for the next page; null: the last page' }),
    rows: z.number().int().meta({ description: 'Rows (test key and person) kept in all for the integration' }),
    rows_max_per_key: z.number().int().meta({
      description:
        'At most this many rows (persons) are kept per test key; a call with that key that would add one more is refused',
    }),
  })
  .meta({ id: 'TestMatchPage' });
export type TestMatchPage = z.infer<typeof TestMatchPageSchema>;

export const TestMatchQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(TEST_MATCHES_PAGE_MAX).default(TEST_MATCHES_PAGE_DEFAULT),
  after: z.string().max(2000).optional().meta({ description: 'The `next` of the page before' }),
});

/** The members a page ends on, in the list's order: newest first, then by key and person. */
const CURSOR = ['firstAt', 'keyId', 'contactId'] as const satisfies readonly (keyof TestMatchCursor)[];

/** One page of the persons the integration's test calls found, the newest rows first. */
export async function testMatches(
  deps: Pick<MigrationDeps, 'store'>,
  integration: Pick<Integration, 'id'>,
  page: { limit: number; after?: string | undefined },
): Promise<TestMatchPage> {
  const after: TestMatchCursor | null = page.after === undefined ? null : decodeCursor(CURSOR, page.after);
  return deps.store.snapshot(async (r) => {
    // One more than the page: whether there is a next one.
    const [found, rows] = await Promise.all([
      r.testMatches.page(integration.id, page.limit + 1, after),
      r.testMatches.count(integration.id),
    ]);
    const entries = found.slice(0, page.limit);
    const last = entries.at(-1);
    return {
      items: entries.map((e) => ({
        key_id: e.keyId,
        key_prefix: e.keyPrefix,
        contact_id: e.contactId,
        lead_id: e.leadId,
        own: e.own,
        endpoint: e.endpoint,
        matched_by: e.matchedBy,
        last_event_id: e.eventId,
        calls: e.calls,
        first_at: e.firstAt,
        last_at: e.lastAt,
      })),
      next: found.length > page.limit && last ? encodeCursor(CURSOR, last) : null,
      rows,
      rows_max_per_key: TEST_MATCHES_MAX_PER_KEY,
    };
  });
}
