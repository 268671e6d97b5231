// A rehearsed unit runs as a unit does (its reads see its own writes, its answer comes back) and
// leaves nothing behind, while units run beside it commit as ever.
import { describe, expect, it } from 'vitest';
import { onEachEngine } from '../support/engines.js';
import { aKey } from '../support/records.js';

onEachEngine((_engine, open) => {
  describe('store.rehearse', () => {
    it('answers what the unit saw and keeps none of its writes', async (ctx) => {
      const store = await open();
      if (!store) return ctx.skip();
      const seen = await store.rehearse(async (tx) => {
        await tx.keys.insert(aKey('k-rehearsed'));
        return (await tx.keys.findByHash('hash-k-rehearsed'))?.id ?? null;
      });
      expect(seen).toBe('k-rehearsed');
      expect(await store.readOne((r) => r.keys.findByHash('hash-k-rehearsed'))).toBeNull();
    });

    it('undoes only itself: units committed beside it stand', async (ctx) => {
      const store = await open();
      if (!store) return ctx.skip();
      // Sent in the same turn: on SQLite they share one group commit, each in its own savepoint.
      await Promise.all([
        store.transact((tx) => tx.keys.insert(aKey('k-before'))),
        store.rehearse((tx) => tx.keys.insert(aKey('k-rehearsed'))),
        store.transact((tx) => tx.keys.insert(aKey('k-after'))),
      ]);
      const found = await store.snapshot(async (r) =>
        (await r.keys.listForIntegration('int-1')).map((k) => k.id).sort(),
      );
      expect(found).toEqual(['k-after', 'k-before']);
    });

    it('gives its connection back with its ROLLBACK answered: the next unit on it waits for the server anew', async (ctx) => {
      const store = await open({ poolSize: 1 });
      if (!store) return ctx.skip();
      if (!store.roundTrips) return; // SQLite: no connection to give back, no round trips
      await store.rehearse((tx) => tx.keys.insert(aKey('k-rehearsed')));
      const before = store.roundTrips();
      // BEGIN and COMMIT sent together on the one connection: one round trip of their own, unless they
      // rode behind a ROLLBACK still in flight (the connection handed back before its end was answered).
      await store.transact(async () => 1);
      expect(store.roundTrips() - before).toBe(1);
    });

    it('passes on a failure of its unit, as transact does', async (ctx) => {
      const store = await open();
      if (!store) return ctx.skip();
      await expect(
        store.rehearse(async (tx) => {
          await tx.keys.insert(aKey('k-failed'));
          throw new Error('refused inside the unit');
        }),
      ).rejects.toThrow('refused inside the unit');
      expect(await store.readOne((r) => r.keys.findByHash('hash-k-failed'))).toBeNull();
    });
  });
});
