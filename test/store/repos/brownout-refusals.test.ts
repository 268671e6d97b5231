// Legacy calls refused in brownout windows, counted per window and route on every engine: added to,
// capped per integration, read in the order of the windows, and deleted by age.
import { describe, expect, it } from 'vitest';
import type { BrownoutRefusal } from '../../../src/store/repos/states.js';
import { onEachEngine } from '../../support/engines.js';

const refusal = (windowStart: string, route: string, calls: number, lastAt: string, integrationId = 'int-1') =>
  ({ integrationId, windowStart, route, calls, lastAt }) satisfies BrownoutRefusal;

const W1 = '2026-12-01T10:00:00.000Z';
const W2 = '2026-12-02T10:00:00.000Z';

onEachEngine((_engine, open) => {
  describe('brownout refusals', () => {
    it('are added per window and route, the later time kept, and read in the order of the windows', async (context) => {
      const store = await open();
      if (!store) return context.skip();
      await store.transact((tx) =>
        tx.states.countBrownoutRefusals(
          [
            refusal(W2, 'POST /api/bots/api/leads/', 2, '2026-12-02T10:01:00.000Z'),
            refusal(W1, 'GET /api/bots/api/leads/', 1, '2026-12-01T10:05:00.000Z'),
            refusal(W1, 'POST /api/bots/api/leads/', 3, '2026-12-01T10:07:00.000Z', 'int-2'),
          ],
          1_000,
        ),
      );
      // A second flush: the counts add up, an earlier time does not move the last one back.
      await store.transact((tx) =>
        tx.states.countBrownoutRefusals(
          [
            refusal(W2, 'POST /api/bots/api/leads/', 5, '2026-12-02T10:00:30.000Z'),
            refusal(W1, 'GET /api/bots/api/leads/', 1, '2026-12-01T10:09:00.000Z'),
          ],
          1_000,
        ),
      );
      expect(await store.snapshot((r) => r.states.brownoutRefusals('int-1', 100))).toEqual([
        { windowStart: W1, route: 'GET /api/bots/api/leads/', calls: 2, lastAt: '2026-12-01T10:09:00.000Z' },
        { windowStart: W2, route: 'POST /api/bots/api/leads/', calls: 7, lastAt: '2026-12-02T10:01:00.000Z' },
      ]);
      // Another integration's rows are its own.
      expect(await store.snapshot((r) => r.states.brownoutRefusals('int-2', 100))).toHaveLength(1);
      // The read is bounded by its limit.
      expect(await store.snapshot((r) => r.states.brownoutRefusals('int-1', 1))).toHaveLength(1);
    });

    it('keep at most the cap of rows per integration: a new row past it is not counted, an existing one still is', async (context) => {
      const store = await open();
      if (!store) return context.skip();
      const at = '2026-12-01T10:00:00.000Z';
      await store.transact((tx) =>
        tx.states.countBrownoutRefusals([refusal(W1, 'GET a', 1, at), refusal(W1, 'GET b', 1, at)], 2),
      );
      await store.transact((tx) =>
        tx.states.countBrownoutRefusals([refusal(W1, 'GET c', 1, at), refusal(W1, 'GET a', 4, at)], 2),
      );
      expect(
        (await store.snapshot((r) => r.states.brownoutRefusals('int-1', 100))).map((r) => [r.route, r.calls]),
      ).toEqual([
        ['GET a', 5],
        ['GET b', 1],
      ]);
    });

    it('are deleted once their window started before the cut, the oldest first, at most a batch', async (context) => {
      const store = await open();
      if (!store) return context.skip();
      await store.transact((tx) =>
        tx.states.countBrownoutRefusals(
          [
            refusal('2026-01-01T00:00:00.000Z', 'GET a', 1, '2026-01-01T00:01:00.000Z'),
            refusal('2026-02-01T00:00:00.000Z', 'GET a', 1, '2026-02-01T00:01:00.000Z'),
            refusal(W1, 'GET a', 1, '2026-12-01T10:01:00.000Z'),
          ],
          1_000,
        ),
      );
      expect(await store.transact((tx) => tx.states.deleteBrownoutRefusals('2026-06-01T00:00:00.000Z', 1))).toBe(1);
      expect((await store.snapshot((r) => r.states.brownoutRefusals('int-1', 100))).map((r) => r.windowStart)).toEqual([
        '2026-02-01T00:00:00.000Z',
        W1,
      ]);
      expect(await store.transact((tx) => tx.states.deleteBrownoutRefusals('2026-06-01T00:00:00.000Z', 10))).toBe(1);
      expect((await store.snapshot((r) => r.states.brownoutRefusals('int-1', 100))).map((r) => r.windowStart)).toEqual([
        W1,
      ]);
    });
  });
});
