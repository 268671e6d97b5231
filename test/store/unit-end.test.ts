// A unit that fails while statements it started are still waiting (siblings of a Promise.all, or the
// read sent after its held-back writes when one of those fails: a recorded event): its end (ROLLBACK)
// goes after them on its connection, nothing it started runs after its end, and the next unit on the
// connection is not disturbed. On PostgreSQL a unit's statements are pipelined (sent before the
// answers of those before them: src/store/postgres/sql.ts); the connection goes back to the pool with
// none of them in flight, so the next unit on it waits for the server anew (one round trip of its own).
import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/store.js';
import type { ApiKey } from '../../src/store/repos/keys.js';
import { DuplicateEventError } from '../../src/store/store.js';
import { onEachEngine } from '../support/engines.js';
import { aKey, aSubmission } from '../support/records.js';

const key = (id: string, hash = `hash-${id}`): ApiKey => aKey(id, { hash });

/**
 * On PostgreSQL, that the one connection came back with nothing of the failed unit in flight: BEGIN
 * and COMMIT of an empty unit, sent together, are one round trip of their own (they would ride on a
 * statement still in flight). SQLite has no connection to give back.
 */
async function connectionIsIdle(store: Store): Promise<void> {
  if (!store.roundTrips) return;
  const before = store.roundTrips();
  await store.transact(async () => 1);
  expect(store.roundTrips() - before).toBe(1);
}

onEachEngine((_engine, open) => {
  describe('a unit that fails with statements still waiting', () => {
    it('ends after its siblings: none of them lands, and the next unit on its connection is not disturbed', async (context) => {
      // One connection: the unit waiting for it gets the very connection the failed unit used.
      const store = await open({ poolSize: 1 });
      if (!store) return context.skip();
      await store.transact(async (tx) => tx.keys.insert(key('k1')));
      const failed = store.transact((tx) =>
        Promise.all([
          tx.keys.insert(key('k1', 'hash-again')), // the id is taken: fails first
          tx.keys.findByHash('hash-k1'),
          tx.keys.insert(key('k2')),
          tx.keys.findByHash('hash-k2'),
          tx.keys.insert(key('k3')),
          tx.keys.findByHash('hash-k3'),
        ]),
      );
      const next = store.transact(async (tx) => {
        await tx.keys.insert(key('k4'));
        return tx.keys.findByHash('hash-k4');
      });
      await expect(failed).rejects.toThrow();
      expect(await next).toEqual(key('k4'));
      // A statement of the failed unit run after its ROLLBACK would have been committed on its own.
      expect((await store.readOne((r) => r.keys.listForIntegration('int-1'))).map((k) => k.id).sort()).toEqual([
        'k1',
        'k4',
      ]);
      await connectionIsIdle(store);
    });

    it("refuses what a unit's answer starts after its first await, on both engines alike", async (context) => {
      const store = await open();
      if (!store) return context.skip();
      await expect(
        store.transact(
          async (tx) => tx.keys.insert(key('k-answered')),
          async (tx) => {
            // The first read goes out with the COMMIT; a second, after an await, would come too late.
            await tx.keys.findByHash('hash-k-answered');
            return tx.keys.findByHash('hash-k-answered');
          },
        ),
      ).rejects.toThrow(/the unit of work had ended/);
      // What the answer reads at once comes back.
      const found = await store.transact(
        async (tx) => tx.keys.insert(key('k-read')),
        async (tx) => tx.keys.findByHash('hash-k-read'),
      );
      expect(found?.id).toBe('k-read');
    });

    it('ends after the read sent behind its held-back writes when one of them fails (an event recorded already)', async (context) => {
      const store = await open({ poolSize: 1 });
      if (!store) return context.skip();
      await store.transact(async (tx) => tx.submissions.insert(aSubmission('e1')));
      const duplicate = await store
        .transact(async (tx) => {
          await tx.keys.insert(key('k1'));
          // The same event under a record of its own (ids are new for every record).
          await tx.submissions.insert({ ...aSubmission('e1'), id: 's-e1-again' });
          // Sent right behind the held-back insert, which fails its check when it answers.
          await tx.keys.findByHash('hash-k1');
        })
        .catch((error: unknown) => error);
      expect(duplicate).toBeInstanceOf(DuplicateEventError);
      expect(await store.readOne((r) => r.keys.findByHash('hash-k1'))).toBeNull();
      await connectionIsIdle(store);
    });
  });
});
