// The live persons test calls found, on every engine: one row per test key and person, counted on,
// capped per integration, paged the latest first, and deleted by retention past RETENTION_USAGE_DAYS.
import { describe, expect, it } from 'vitest';
import type { TestMatch } from '../../../src/store/repos/test-matches.js';
import { runRetention } from '../../../src/retention/retention.js';
import { onEachEngine } from '../../support/engines.js';

const SESSIONS = { idleMs: 3_600_000, maxMs: 12 * 3_600_000 };
const match = (contactId: string, at: string, over: Partial<TestMatch> = {}): TestMatch => ({
  integrationId: 'int-1',
  keyId: 'key-1',
  contactId,
  leadId: `lead-of-${contactId}`,
  endpoint: 'leads',
  eventId: `e-${at}`,
  matchedBy: 'phone',
  own: false,
  at,
  ...over,
});

onEachEngine((_engine, open) => {
  describe('test matches', () => {
    it("counts calls on the row of their key and person, refuses a key's new row past its cap, and pages the newest rows first", async (context) => {
      const store = await open();
      if (!store) return context.skip();
      const record = (m: TestMatch, max = 3) => store.transact((tx) => tx.testMatches.record(m, max));
      expect(await record(match('c1', '2026-11-20T10:00:00.000Z'))).toBe(true);
      expect(await record(match('c1', '2026-11-21T10:00:00.000Z', { matchedBy: 'email', eventId: 'last' }))).toBe(true);
      expect(await record(match('c2', '2026-11-20T11:00:00.000Z'))).toBe(true);
      expect(await record(match('c2', '2026-11-20T12:00:00.000Z', { keyId: 'key-2', own: true }))).toBe(true);
      // Another integration's rows are its own.
      expect(await record(match('c9', '2026-11-20T12:00:00.000Z', { integrationId: 'int-2' }))).toBe(true);
      expect(await record(match('c3', '2026-11-20T13:00:00.000Z'))).toBe(true);
      // key-1's fourth person is past its cap of 3; its rows go on counting, and key-2 is not held back.
      expect(await record(match('c4', '2026-11-22T10:00:00.000Z'))).toBe(false);
      expect(await record(match('c1', '2026-11-22T10:00:00.000Z'))).toBe(true);
      expect(await record(match('c4', '2026-11-22T11:00:00.000Z', { keyId: 'key-2' }))).toBe(true);
      expect(await store.snapshot((r) => r.testMatches.count('int-1'))).toBe(5);

      // The newest rows first: a row's first call never moves, whatever calls come later.
      const first = await store.snapshot((r) => r.testMatches.page('int-1', 2, null));
      expect(first.map((e) => [e.keyId, e.contactId, e.calls, e.own])).toEqual([
        ['key-2', 'c4', 1, false],
        ['key-1', 'c3', 1, false],
      ]);
      const last = first.at(-1)!;
      const second = await store.snapshot((r) =>
        r.testMatches.page('int-1', 5, { firstAt: last.firstAt, keyId: last.keyId, contactId: last.contactId }),
      );
      expect(second.map((e) => [e.keyId, e.contactId, e.calls, e.own])).toEqual([
        ['key-2', 'c2', 1, true],
        ['key-1', 'c2', 1, false],
        ['key-1', 'c1', 3, false],
      ]);
      expect(second[2]).toMatchObject({
        firstAt: '2026-11-20T10:00:00.000Z',
        lastAt: '2026-11-22T10:00:00.000Z',
        leadId: 'lead-of-c1',
        keyPrefix: null,
      });
    });

    it('retention deletes the rows whose last call is older than RETENTION_USAGE_DAYS, a batch at a time', async (context) => {
      const store = await open();
      if (!store) return context.skip();
      const now = new Date('2026-11-26T12:00:00.000Z');
      await store.transact(async (tx) => {
        for (const [c, at] of [
          ['a', '2026-08-01T00:00:00.000Z'],
          ['b', '2026-08-02T00:00:00.000Z'],
          ['c', '2026-08-03T00:00:00.000Z'],
          ['d', '2026-11-25T00:00:00.000Z'],
        ] as const)
          await tx.testMatches.record(match(c, at), 100);
      });
      const first = await runRetention(store, { usageDays: 90, answersDays: 90 }, SESSIONS, now, 2);
      expect(first.test_matches_deleted).toBe(2);
      expect((await store.snapshot((r) => r.testMatches.page('int-1', 10, null))).map((e) => e.contactId)).toEqual([
        'd',
        'c',
      ]);
      expect(
        (await runRetention(store, { usageDays: 90, answersDays: 90 }, SESSIONS, now, 2)).test_matches_deleted,
      ).toBe(1);
      expect((await store.snapshot((r) => r.testMatches.page('int-1', 10, null))).map((e) => e.contactId)).toEqual([
        'd',
      ]);
    });
  });
});
