// The lead repositories (leads, tags, comments, payments, field values, pages of an integration's
// leads) give the same answers on every engine; money sums exactly past 64 bits.
import { describe, expect, it } from 'vitest';
import type { Repos, Store } from '../../../src/store/store.js';
import type { Lead } from '../../../src/store/repos/leads.js';
import { onEachEngine } from '../../support/engines.js';
import { aFieldValue, aLead } from '../../support/records.js';

const lead = (id: string, createdAt: string, over: Partial<Lead> = {}): Lead =>
  aLead(id, { createdAt, updatedAt: createdAt, ...over });

const value = aFieldValue;

const withPerson = (store: Store, fn: (tx: Repos) => Promise<void>) =>
  store.transact(async (tx) => {
    await tx.contacts.insert({
      id: 'c1',
      workspaceId: 'ws-1',
      firstName: 'Ann',
      lastName: null,
      phone: null,
      email: null,
      createdAt: 't',
      updatedAt: 't',
    });
    await fn(tx);
  });

onEachEngine((_engine, open) => {
  describe('leads', () => {
    it("stores a lead and its patches, extra data included, and finds the person's latest live lead", async (context) => {
      const store = await open();
      if (!store) return context.skip();
      await withPerson(store, async (tx) => {
        await tx.leads.insert(lead('l1', 't1', { extraData: { person_id: '42', nested: { a: [1, 2] } } }));
        await tx.leads.insert(lead('l2', 't2', { statusId: 's1' }));
        await tx.leads.insert(lead('l3', 't2', { statusId: 's1', groupId: 'g1' }));
      });
      expect(await store.readOne((r) => r.leads.get('l1'))).toEqual(
        lead('l1', 't1', { extraData: { person_id: '42', nested: { a: [1, 2] } } }),
      );
      expect((await store.transact((tx) => tx.leads.lockLatestOfContact('c1')))?.id).toBe('l3');
      await store.transact((tx) => tx.leads.update('l3', { deletedAt: 't3', updatedAt: 't3' }));
      await store.transact((tx) => tx.leads.update('l1', { extraData: null, notes: 'n', statusId: 's1' }));
      expect((await store.transact((tx) => tx.leads.lockLatestOfContact('c1')))?.id).toBe('l2');
      expect(await store.readOne((r) => r.leads.get('l1'))).toEqual(lead('l1', 't1', { notes: 'n', statusId: 's1' }));
      expect(await store.readOne((r) => r.leads.countByStatus('s1'))).toBe(2);
      expect(await store.readOne((r) => r.leads.countByGroup('g1'))).toBe(0);
      expect(await store.readOne((r) => r.leads.get('nope'))).toBeNull();
      expect(await store.transact((tx) => tx.leads.lock('l1'))).toEqual(
        lead('l1', 't1', { notes: 'n', statusId: 's1' }),
      );
      expect(await store.transact((tx) => tx.leads.lock('nope'))).toBeNull();
    });

    it('keeps tags once each, comments in order, and payments summed exactly past 2^64', async (context) => {
      const store = await open();
      if (!store) return context.skip();
      await withPerson(store, async (tx) => {
        await tx.leads.insert(lead('l1', 't1'));
        await tx.leads.addTags('l1', ['b', 'a', 'b']);
        await tx.leads.addTags('l1', ['a']);
        await tx.leads.addTags('l1', []);
        await tx.leads.addComment({
          id: 'm1',
          leadId: 'l1',
          body: 'first',
          authorKind: 'integration',
          authorRef: 'int-1',
          createdAt: 't1',
        });
        await tx.leads.addComment({
          id: 'm2',
          leadId: 'l1',
          body: 'second',
          authorKind: 'employee',
          authorRef: null,
          createdAt: 't1',
        });
      });
      expect(await store.readOne((r) => r.leads.tagIds('l1'))).toEqual(['a', 'b']);
      expect(await store.readOne((r) => r.leads.commentsCount('l1'))).toBe(2);
      expect(
        (await store.readOne((r) => r.leads.listComments('l1', { offset: 0, limit: 10 }))).map((c) => [
          c.id,
          c.body,
          c.authorKind,
        ]),
      ).toEqual([
        ['m1', 'first', 'integration'],
        ['m2', 'second', 'employee'],
      ]);
      // The comment caps count UTF-8 bytes: "second" and "first" are 11, "ж" two more each.
      expect(await store.readOne((r) => r.leads.commentTotals('l1'))).toEqual({ count: 2, bytes: 11 });
      await store.transact((tx) =>
        tx.leads.addComment({
          id: 'm3',
          leadId: 'l1',
          body: 'жж',
          authorKind: 'integration',
          authorRef: null,
          createdAt: 't2',
        }),
      );
      expect(await store.readOne((r) => r.leads.commentTotals('l1'))).toEqual({ count: 3, bytes: 15 });
      expect(await store.readOne((r) => r.leads.commentTotals('none'))).toEqual({ count: 0, bytes: 0 });
      expect(
        (await store.readOne((r) => r.leads.listComments('l1', { offset: 1, limit: 1 }))).map((c) => c.id),
      ).toEqual(['m2']);
      expect(
        (await store.readOne((r) => r.leads.listComments('l1', { offset: 1, limit: 5 }))).map((c) => c.id),
      ).toEqual(['m2', 'm3']);
      expect(await store.readOne((r) => r.leads.listComments('l1', { offset: 3, limit: 5 }))).toEqual([]);
      expect(await store.readOne((r) => r.leads.payments('l1'))).toEqual({ totalMinor: 0n, lastAt: null });
      const big = 2n ** 63n - 1n;
      await store.transact(async (tx) => {
        await tx.leads.addPayment({ id: 'p1', leadId: 'l1', amountMinor: big, note: null, createdAt: 't1' });
        await tx.leads.addPayment({ id: 'p2', leadId: 'l1', amountMinor: big, note: 'again', createdAt: 't3' });
        await tx.leads.addPayment({ id: 'p3', leadId: 'l1', amountMinor: 7n, note: null, createdAt: 't2' });
      });
      expect(await store.readOne((r) => r.leads.payments('l1'))).toEqual({ totalMinor: 2n * big + 7n, lastAt: 't3' });
    });

    it("lists a workspace's live leads newest first, filtered by stage, integration, time and field values", async (context) => {
      const store = await open();
      if (!store) return context.skip();
      await withPerson(store, async (tx) => {
        await tx.leads.insert(lead('l1', 't1', { stageId: 'st1' }));
        await tx.leads.insert(lead('l2', 't2', { stageId: 'st1', integrationId: 'int-2' }));
        await tx.leads.insert(lead('l3', 't3'));
        await tx.leads.insert(lead('l4', 't4', { deletedAt: 't5' }));
        await tx.fieldValues.put(value('l1', 'f-bool', { bool: true }));
        await tx.fieldValues.put(value('l2', 'f-bool', { bool: false }));
        await tx.fieldValues.put(value('l1', 'f-multi', { optionIds: ['o1', 'o2'] }));
        await tx.fieldValues.put(value('l3', 'f-multi', { optionIds: ['o2'] }));
        await tx.fieldValues.put(value('l3', 'f-text', { text: 'x' }));
      });
      const ids = async (filter: Partial<Parameters<Repos['leads']['list']>[0]>) =>
        (await store.snapshot((r) => r.leads.list({ workspaceId: 'ws-1', fields: [], limit: 10, ...filter }))).map(
          (l) => l.id,
        );
      expect(await ids({})).toEqual(['l3', 'l2', 'l1']);
      expect(await ids({ limit: 2 })).toEqual(['l3', 'l2']);
      expect(await ids({ before: 't3' })).toEqual(['l2', 'l1']);
      expect(await ids({ stageId: 'st1' })).toEqual(['l2', 'l1']);
      expect(await ids({ integrationId: 'int-1' })).toEqual(['l3', 'l1']);
      expect(await ids({ fields: [{ fieldId: 'f-bool', column: 'boolean_value', value: false }] })).toEqual(['l2']);
      expect(await ids({ fields: [{ fieldId: 'f-multi', column: 'selected_options', value: ['o2'] }] })).toEqual([
        'l3',
        'l1',
      ]);
      expect(await ids({ fields: [{ fieldId: 'f-multi', column: 'selected_options', value: ['o2', 'o1'] }] })).toEqual([
        'l1',
      ]);
      expect(
        await ids({
          fields: [
            { fieldId: 'f-text', column: 'text_value', value: 'x' },
            { fieldId: 'f-multi', column: 'selected_options', value: ['o2'] },
          ],
        }),
      ).toEqual(['l3']);
      expect(await ids({ workspaceId: 'ws-2' })).toEqual([]);
    });

    it("lists an integration's legacy leads, or only those whose person it has no binding to", async (context) => {
      const store = await open();
      if (!store) return context.skip();
      await withPerson(store, async (tx) => {
        await tx.contacts.insert({
          id: 'c2',
          workspaceId: 'ws-1',
          firstName: 'Bo',
          lastName: null,
          phone: null,
          email: null,
          createdAt: 't',
          updatedAt: 't',
        });
        await tx.leads.insert(lead('l1', 't1', { origin: 'legacy' }));
        await tx.leads.insert(lead('l2', 't2', { origin: 'legacy', contactId: 'c2' }));
        await tx.leads.insert(lead('l3', 't3'));
        await tx.contacts.bind('int-1', 'ext', 'c1', 't');
      });
      expect((await store.snapshot((r) => r.leads.listLegacy('int-1', false))).map((l) => l.id)).toEqual(['l1', 'l2']);
      expect((await store.snapshot((r) => r.leads.listLegacy('int-1', true))).map((l) => l.id)).toEqual(['l2']);
    });
  });

  describe('field values', () => {
    it("puts a value, replacing the lead's earlier value of that field, with its writer", async (context) => {
      const store = await open();
      if (!store) return context.skip();
      await withPerson(store, async (tx) => {
        await tx.leads.insert(lead('l1', 't1'));
        await tx.fieldValues.put(value('l1', 'f2', { decimal: '10.50' }));
        await tx.fieldValues.put(value('l1', 'f1', { optionIds: ['o1'], writtenBy: { kind: 'employee', ref: 'ann' } }));
        await tx.fieldValues.put(
          value('l1', 'f2', { id: 'other', bool: false, date: '2026-01-02', writtenBy: { kind: 'import', ref: null } }),
        );
      });
      expect(await store.readOne((r) => r.fieldValues.get('l1', 'f2'))).toEqual(
        value('l1', 'f2', { bool: false, date: '2026-01-02', writtenBy: { kind: 'import', ref: null } }),
      );
      expect(await store.readOne((r) => r.fieldValues.get('l1', 'f3'))).toBeNull();
      expect(await store.snapshot((r) => r.fieldValues.listForLead('l1'))).toEqual([
        value('l1', 'f1', { optionIds: ['o1'], writtenBy: { kind: 'employee', ref: 'ann' } }),
        value('l1', 'f2', { bool: false, date: '2026-01-02', writtenBy: { kind: 'import', ref: null } }),
      ]);
    });
  });

  describe('lead pages', () => {
    it("counts an integration's live leads and pages them newest first, after, before or from an offset", async (context) => {
      const store = await open();
      if (!store) return context.skip();
      await withPerson(store, async (tx) => {
        for (const [id, at] of [
          ['l1', 't1'],
          ['l2', 't2'],
          ['l3', 't2'],
          ['l4', 't3'],
          ['l5', 't4'],
        ] as const)
          await tx.leads.insert(lead(id, at));
        await tx.leads.insert(lead('gone', 't5', { deletedAt: 't6' }));
        await tx.leads.insert(lead('other', 't5', { integrationId: 'int-2' }));
      });
      const page = async (position: Parameters<Repos['leadPages']['pageOfIntegration']>[1], limit: number) =>
        (await store.snapshot((r) => r.leadPages.pageOfIntegration('int-1', position, limit))).map((l) => l.id);
      expect(await store.readOne((r) => r.leadPages.countOfIntegration('int-1'))).toBe(5);
      expect(await store.readOne((r) => r.leadPages.countOfIntegration('int-9'))).toBe(0);
      expect(await page({ offset: 0 }, 2)).toEqual(['l5', 'l4']);
      expect(await page({ offset: 2 }, 2)).toEqual(['l3', 'l2']);
      expect(await page({ after: { createdAt: 't2', id: 'l3' } }, 2)).toEqual(['l2', 'l1']);
      expect(await page({ before: { createdAt: 't2', id: 'l2' } }, 2)).toEqual(['l4', 'l3']);
    });
  });
});
