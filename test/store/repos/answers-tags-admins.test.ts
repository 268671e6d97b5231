// The answer log, legacy tags and named admin credentials give the same answers on every engine.
import { describe, expect, it } from 'vitest';
import type { StoredAnswer } from '../../../src/store/repos/answers.js';
import type { AdminCredential } from '../../../src/store/repos/admin-credentials.js';
import { onEachEngine } from '../../support/engines.js';
import { aContact, aLead } from '../../support/records.js';

const answer = (id: string, createdAt: string, over: Partial<StoredAnswer> = {}): StoredAnswer => ({
  id,
  submissionId: 's1',
  integrationId: 'int-1',
  leadId: 'l1',
  key: `q-${id}`,
  raw: { value: [1.5, 'x', null], nested: { a: true } },
  outcome: 'unmapped',
  error: null,
  fieldId: null,
  createdAt,
  appliedAt: null,
  appliedOutcome: null,
  ...over,
});

const credential = (id: string, name: string, createdAt: string): AdminCredential => ({
  id,
  name,
  prefix: 'lga_ab',
  hash: `hash-${id}`,
  createdAt,
  createdBy: 'ops',
  revokedAt: null,
});

onEachEngine((_engine, open) => {
  describe('answers', () => {
    it("lists the integration's unmapped answers not yet applied, oldest first, raw values as given", async (context) => {
      const store = await open();
      if (!store) return context.skip();
      await store.transact(async (tx) => {
        await tx.contacts.insert(aContact('c1', { createdAt: 't', updatedAt: 't' }));
        await tx.leads.insert(aLead('l1', { createdAt: 't', updatedAt: 't' }));
        await tx.answers.insert(answer('a2', 't2'));
        await tx.answers.insert(answer('a1', 't1', { raw: 'plain' }));
        await tx.answers.insert(answer('a3', 't2', { raw: 3 }));
        await tx.answers.insert(answer('a4', 't0', { outcome: 'written', fieldId: 'f1' }));
        await tx.answers.insert(answer('a5', 't0', { integrationId: 'int-2' }));
      });
      const keys = ['q-a1', 'q-a2', 'q-a3', 'q-a4', 'q-a5'];
      expect(await store.snapshot((r) => r.answers.listPendingUnmapped('int-1', keys, 10))).toEqual([
        answer('a1', 't1', { raw: 'plain' }),
        answer('a2', 't2'),
        answer('a3', 't2', { raw: 3 }),
      ]);
      // Only the keys asked for, at most the limit, oldest first; the rest counted.
      expect(
        (await store.snapshot((r) => r.answers.listPendingUnmapped('int-1', ['q-a2', 'q-a3'], 1))).map((a) => a.id),
      ).toEqual(['a2']);
      expect(await store.snapshot((r) => r.answers.listPendingUnmapped('int-1', [], 10))).toEqual([]);
      expect(await store.snapshot((r) => r.answers.countPendingUnmapped('int-1', ['q-a2', 'q-a3']))).toEqual({
        withKeys: 2,
        others: 1,
      });
      expect(await store.snapshot((r) => r.answers.countPendingUnmapped('int-1', []))).toEqual({
        withKeys: 0,
        others: 3,
      });
      await store.transact((tx) => tx.answers.markApplied('a2', 't9', 'written', 'f7', null));
      await store.transact((tx) => tx.answers.markApplied('a1', 't9', 'invalid', null, 'not a number'));
      expect((await store.snapshot((r) => r.answers.listPendingUnmapped('int-1', keys, 10))).map((a) => a.id)).toEqual([
        'a3',
      ]);
    });

    it('sums up the waiting unmapped answers by key: the most frequent first, recent distinct values, within the bounds', async (context) => {
      const store = await open();
      if (!store) return context.skip();
      await store.transact(async (tx) => {
        await tx.contacts.insert(aContact('c1', { createdAt: 't', updatedAt: 't' }));
        await tx.leads.insert(aLead('l1', { createdAt: 't', updatedAt: 't' }));
        const level = (id: string, t: string, raw: unknown) => tx.answers.insert(answer(id, t, { key: 'level', raw }));
        await level('l1', 't1', 'B1');
        await level('l2', 't2', 'B2');
        await level('l3', 't3', 'B1');
        await level('l4', 't4', { nested: [1, 'x'] });
        await level('l5', 't5', 'C1');
        await tx.answers.insert(answer('d1', 't6', { key: 'days', raw: ['Monday'] }));
        await tx.answers.insert(answer('d2', 't7', { key: 'days', raw: ['Monday'] }));
        await tx.answers.insert(answer('z1', 't0', { key: 'zone' }));
        // Not waiting, or another integration's: never counted.
        await tx.answers.insert(answer('w1', 't9', { key: 'level', outcome: 'written', fieldId: 'f1' }));
        await tx.answers.insert(answer('o1', 't9', { key: 'level', integrationId: 'int-2' }));
      });
      await store.transact((tx) => tx.answers.markApplied('z1', 't9', 'written', 'f2', null));
      const all = await store.snapshot((r) =>
        r.answers.summarizePendingUnmapped('int-1', { keys: 10, examples: 3, scan: 100 }),
      );
      expect(all).toEqual({
        keys: [
          { key: 'level', count: 5, lastSeen: 't5', examples: ['C1', { nested: [1, 'x'] }, 'B1'] },
          { key: 'days', count: 2, lastSeen: 't7', examples: [['Monday']] },
        ],
        totalKeys: 2,
        scanned: 7,
      });
      // One key shown of two; only the 3 most recent answers counted.
      expect(
        await store.snapshot((r) => r.answers.summarizePendingUnmapped('int-1', { keys: 1, examples: 1, scan: 3 })),
      ).toEqual({
        keys: [{ key: 'days', count: 2, lastSeen: 't7', examples: [['Monday']] }],
        totalKeys: 2,
        scanned: 3,
      });
      expect(
        await store.snapshot((r) => r.answers.summarizePendingUnmapped('int-3', { keys: 10, examples: 3, scan: 100 })),
      ).toEqual({ keys: [], totalKeys: 0, scanned: 0 });
    });
  });

  describe('legacy tags', () => {
    it('keeps the first tag of an id, per workspace, and lists them by name', async (context) => {
      const store = await open();
      if (!store) return context.skip();
      const first = { workspaceId: 'ws-1', id: '7', name: 'VIP', color: '#f00', createdAt: 't1' };
      expect(await store.transact((tx) => tx.legacyTags.ensure(first))).toEqual(first);
      expect(
        await store.transact((tx) => tx.legacyTags.ensure({ ...first, name: 'Other', color: null, createdAt: 't2' })),
      ).toEqual(first);
      await store.transact((tx) =>
        tx.legacyTags.ensure({ workspaceId: 'ws-1', id: '8', name: 'Cold', color: null, createdAt: 't3' }),
      );
      await store.transact((tx) =>
        tx.legacyTags.ensure({ workspaceId: 'ws-2', id: '7', name: 'Else', color: null, createdAt: 't3' }),
      );
      expect((await store.snapshot((r) => r.legacyTags.list('ws-1'))).map((t) => t.name)).toEqual(['Cold', 'VIP']);
      expect(await store.readOne((r) => r.legacyTags.get('ws-2', '7'))).toMatchObject({ name: 'Else' });
      expect(await store.readOne((r) => r.legacyTags.get('ws-3', '7'))).toBeNull();
      expect(await store.readOne((r) => r.legacyTags.count('ws-1'))).toBe(2);
      expect(await store.readOne((r) => r.legacyTags.count('ws-3'))).toBe(0);
    });
  });

  describe('admin credentials', () => {
    it('finds a credential by its hash, lists them by name, and revokes every live one of a name', async (context) => {
      const store = await open();
      if (!store) return context.skip();
      await store.transact(async (tx) => {
        await tx.adminCredentials.insert(credential('x2', 'zoe', 't1'));
        await tx.adminCredentials.insert(credential('x1', 'ann', 't2'));
        await tx.adminCredentials.insert(credential('x3', 'ann', 't1'));
      });
      expect(await store.readOne((r) => r.adminCredentials.findByHash('hash-x1'))).toEqual(
        credential('x1', 'ann', 't2'),
      );
      expect(await store.readOne((r) => r.adminCredentials.findByHash('nope'))).toBeNull();
      expect((await store.snapshot((r) => r.adminCredentials.list())).map((c) => c.id)).toEqual(['x3', 'x1', 'x2']);
      expect(await store.transact((tx) => tx.adminCredentials.revokeByName('ann', 't5'))).toBe(2);
      expect(await store.transact((tx) => tx.adminCredentials.revokeByName('ann', 't6'))).toBe(0);
      expect((await store.snapshot((r) => r.adminCredentials.list())).map((c) => c.revokedAt)).toEqual([
        't5',
        't5',
        null,
      ]);
    });
  });
});
