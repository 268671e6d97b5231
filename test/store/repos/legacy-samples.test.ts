// The porting guide's samples (one redacted legacy call per integration and route) on every engine:
// the newest kept whatever order the replicas flush in, retention deleting those past its days.
import { describe, expect, it } from 'vitest';
import type { LegacySample } from '../../../src/store/repos/states.js';
import { runRetention } from '../../../src/retention/retention.js';
import { onEachEngine } from '../../support/engines.js';

const sample = (route: string, at: string, integrationId = 'int-1'): LegacySample => ({
  integrationId,
  route,
  at,
  sample: { method: 'POST', path: route, body: { first_name: '<name>', at } },
});
const SESSIONS = { idleMs: 3_600_000, maxMs: 12 * 3_600_000 };

onEachEngine((_engine, open) => {
  describe('legacy samples', () => {
    it('keeps one per integration and route, the newest, whichever flush comes last', async (context) => {
      const store = await open();
      if (!store) return context.skip();
      await store.transact((tx) =>
        tx.states.putSamples([
          sample('POST /leads/', '2026-11-20T10:00:00.000Z'),
          sample('GET /boards/', '2026-11-20T10:00:00.000Z'),
          sample('POST /leads/', '2026-11-20T10:00:00.000Z', 'int-2'),
        ]),
      );
      await store.transact((tx) => tx.states.putSamples([sample('POST /leads/', '2026-11-21T10:00:00.000Z')]));
      // A replica flushing an older sample later does not replace the newer one.
      await store.transact((tx) => tx.states.putSamples([sample('POST /leads/', '2026-11-19T10:00:00.000Z')]));
      const kept = await store.snapshot((r) => r.states.samples('int-1'));
      expect(kept.map((s) => [s.route, s.at])).toEqual([
        ['GET /boards/', '2026-11-20T10:00:00.000Z'],
        ['POST /leads/', '2026-11-21T10:00:00.000Z'],
      ]);
      expect(kept[1]!.sample).toEqual(sample('POST /leads/', '2026-11-21T10:00:00.000Z').sample);
    });

    it('retention deletes the samples older than RETENTION_USAGE_DAYS, a batch at a time, and keeps the others', async (context) => {
      const store = await open();
      if (!store) return context.skip();
      const now = new Date('2026-11-26T12:00:00.000Z');
      await store.transact((tx) =>
        tx.states.putSamples([
          sample('POST /a/', '2026-08-01T00:00:00.000Z'),
          sample('POST /b/', '2026-08-02T00:00:00.000Z'),
          sample('POST /c/', '2026-08-03T00:00:00.000Z'),
          sample('POST /d/', '2026-11-25T00:00:00.000Z'),
        ]),
      );
      const first = await runRetention(store, { usageDays: 90, answersDays: 90 }, SESSIONS, now, 2);
      expect(first.samples_deleted).toBe(2);
      expect((await store.snapshot((r) => r.states.samples('int-1'))).map((s) => s.route)).toEqual([
        'POST /c/',
        'POST /d/',
      ]);
      expect((await runRetention(store, { usageDays: 90, answersDays: 90 }, SESSIONS, now, 2)).samples_deleted).toBe(1);
      expect((await store.snapshot((r) => r.states.samples('int-1'))).map((s) => s.route)).toEqual(['POST /d/']);
    });
  });
});
