// The reads that answer in one statement what took several (person matching, the lead object's parts,
// the stored values of many fields), and the writes a unit holds back and sends together: the same
// answers on every engine, and a unit reads its own writes whichever way they were sent.
import { describe, expect, it } from 'vitest';
import type { Repos, Store } from '../../../src/store/store.js';
import { DuplicateEventError } from '../../../src/store/store.js';
import type { FieldValue } from '../../../src/store/repos/field-values.js';
import { onEachEngine } from '../../support/engines.js';
import { aContact, aFieldValue, aLead, aSubmission } from '../../support/records.js';

const contact = aContact;

const lead = aLead;

const value = (leadId: string, fieldId: string, text: string): FieldValue =>
  aFieldValue(leadId, fieldId, { text, updatedAt: 't1' });

const keys = (over: { externalId?: string; phone?: string; email?: string }) => ({
  externalId: null,
  phone: null,
  email: null,
  ...over,
});
const matchedIn = (store: Store, over: Parameters<typeof keys>[0]) =>
  store.readOne(async (r: Repos) => {
    const found = await r.contacts.match('ws-1', 'int-1', keys(over));
    return found && [found.by, found.contact.id];
  });

onEachEngine((engine, open) => {
  describe('reads in one statement', () => {
    it('matches a person by binding, then phone, then e-mail, each as its own look-up finds it', async (context) => {
      const store = await open();
      if (!store) return context.skip();
      await store.transact(async (tx) => {
        await tx.contacts.insert(contact('c1', { phone: '+1', email: 'Ann@Example.com' }));
        await tx.contacts.insert(contact('c2', { phone: '+1', updatedAt: 't2' }));
        await tx.contacts.insert(contact('c3', { email: 'ann@example.com', workspaceId: 'ws-2' }));
        await tx.contacts.bindNew('int-1', 'tg:1', 'c1', 't1');
      });
      expect(await matchedIn(store, { externalId: 'tg:1', phone: '+1' })).toEqual(['binding', 'c1']);
      // The most recently active person with the phone, as the match finds it.
      expect(await matchedIn(store, { externalId: 'tg:2', phone: '+1', email: 'ann@example.com' })).toEqual([
        'phone',
        'c2',
      ]);
      expect(await matchedIn(store, { phone: '+2', email: 'ANN@example.COM' })).toEqual(['email', 'c1']);
      expect(await matchedIn(store, { externalId: 'tg:2', phone: '+2', email: 'bob@example.com' })).toBeNull();
      expect(await matchedIn(store, {})).toBeNull();
    });

    it("reads a lead's values of many fields, and the lead object's parts at once", async (context) => {
      const store = await open();
      if (!store) return context.skip();
      const empty = {
        fieldValues: [],
        payments: { totalMinor: 0n, lastAt: null },
        tagIds: [],
        commentsCount: 0,
        statusCount: 0,
        groupCount: 0,
      };
      await store.transact(async (tx) => {
        await tx.contacts.insert(contact('c1'));
        await tx.leads.insert(lead('l1', { statusId: 's1', groupId: 'g1' }));
        await tx.leads.insert(lead('l2', { statusId: 's1' }));
        expect(await tx.leadViews.parts('l1', null, null)).toEqual(empty);
        await tx.fieldValues.put(value('l1', 'f2', 'two'));
        await tx.fieldValues.put(value('l1', 'f1', 'one'));
        await tx.leads.addTags('l1', ['b', 'a']);
        await tx.leads.addComment({
          id: 'm1',
          leadId: 'l1',
          body: 'x',
          authorKind: 'integration',
          authorRef: null,
          createdAt: 't1',
        });
        await tx.leads.addPayment({ id: 'p1', leadId: 'l1', amountMinor: 2n ** 63n - 1n, note: null, createdAt: 't2' });
      });
      expect(await store.readOne((r) => r.fieldValues.getMany('l1', ['f1', 'f3', 'f1']))).toEqual([
        value('l1', 'f1', 'one'),
      ]);
      expect(await store.readOne((r) => r.fieldValues.getMany('l1', []))).toEqual([]);
      expect(await store.readOne((r) => r.leadViews.parts('l1', 's1', 'g1'))).toEqual({
        fieldValues: [value('l1', 'f1', 'one'), value('l1', 'f2', 'two')],
        payments: { totalMinor: 2n ** 63n - 1n, lastAt: 't2' },
        tagIds: ['a', 'b'],
        commentsCount: 1,
        statusCount: 2,
        groupCount: 1,
      });
      expect(await store.readOne((r) => r.leadViews.parts('l2', 's-none', null))).toEqual(empty);
      // With the lead itself, counted under its own status and group.
      expect(await store.readOne((r) => r.leadViews.withLead('l1'))).toEqual({
        lead: lead('l1', { statusId: 's1', groupId: 'g1' }),
        parts: await store.readOne((r) => r.leadViews.parts('l1', 's1', 'g1')),
      });
      expect(await store.readOne((r) => r.leadViews.withLead('l2'))).toEqual({
        lead: lead('l2', { statusId: 's1' }),
        parts: { ...empty, statusCount: 2 },
      });
      expect(await store.readOne((r) => r.leadViews.withLead('nope'))).toBeNull();
      // A new lead's reply reads only the counts (its other parts are what its unit wrote).
      const counts = (status: string | null, group: string | null) =>
        store.readOne((r) => r.leadViews.counts(status, group));
      expect(await counts('s1', 'g1')).toEqual({ statusCount: 2, groupCount: 1 });
      expect(await counts('s1', null)).toEqual({ statusCount: 2, groupCount: 0 });
      expect(await counts(null, 'g1')).toEqual({ statusCount: 0, groupCount: 1 });
      expect(await counts('s-none', 'g-none')).toEqual({ statusCount: 0, groupCount: 0 });
      // Neither named: nothing to read (PostgreSQL answers without a round trip).
      expect(await counts(null, null)).toEqual({ statusCount: 0, groupCount: 0 });
    });
  });

  describe('writes a unit holds back', () => {
    it('reads its own writes, a row written twice included, and leaves nothing when it throws', async (context) => {
      const store = await open();
      if (!store) return context.skip();
      const read = await store.transact(async (tx) => {
        await tx.contacts.insert(contact('c1'));
        await tx.leads.insert(lead('l1', { statusId: 's1' }));
        // The same rows again: parts of one statement would not see each other's rows.
        await tx.leads.update('l1', { notes: 'updated', statusId: 's2' });
        await tx.fieldValues.put(value('l1', 'f1', 'first'));
        await tx.fieldValues.put(value('l1', 'f1', 'second'));
        await tx.contacts.fillEmpty('c1', { phone: '+1' }, 't2');
        return {
          lead: await tx.leads.get('l1'),
          values: await tx.fieldValues.listForLead('l1'),
          contact: await tx.contacts.get('c1'),
        };
      });
      expect(read.lead).toMatchObject({ notes: 'updated', statusId: 's2' });
      expect(read.values).toEqual([value('l1', 'f1', 'second')]);
      expect(read.contact).toMatchObject({ phone: '+1', updatedAt: 't2' });
      // The trigger-kept counts, fired at the end of the statement that sent the writes.
      expect(
        await store.readOne((r) => Promise.all([r.leads.countByStatus('s1'), r.leads.countByStatus('s2')])),
      ).toEqual([0, 1]);

      const thrown = await store
        .transact(async (tx) => {
          await tx.leads.insert(lead('l2'));
          throw new Error('changed its mind');
        })
        .catch((error: Error) => error.message);
      expect(thrown).toBe('changed its mind');
      expect(await store.readOne((r) => r.leads.get('l2'))).toBeNull();
    });

    it('fails the whole unit when a held-back write fails: a recorded event, a taken binding', async (context) => {
      const store = await open();
      if (!store) return context.skip();
      await store.transact(async (tx) => {
        await tx.contacts.insert(contact('c1'));
        await tx.contacts.bindNew('int-1', 'tg:1', 'c1', 't1');
        await tx.submissions.insert(aSubmission('e1'));
      });
      const duplicate = await store
        .transact(async (tx) => {
          await tx.contacts.insert(contact('c2'));
          await tx.submissions.insert(aSubmission('e1'));
        })
        .catch((error: unknown) => error);
      expect(duplicate).toBeInstanceOf(DuplicateEventError);
      const taken = await store
        .transact(async (tx) => {
          await tx.contacts.insert(contact('c3'));
          await tx.contacts.bindNew('int-1', 'tg:1', 'c3', 't1');
          await tx.leads.get('l1');
        })
        .catch((error: Error) => error.message);
      // A unique violation of the binding (its person lock not taken): a fault, not a domain answer.
      expect(taken).toMatch(engine === 'sqlite' ? /tg:1 was bound by a unit that did not lock it/ : /contact_bindings/);
      expect(await store.readOne((r) => Promise.all([r.contacts.get('c2'), r.contacts.get('c3')]))).toEqual([
        null,
        null,
      ]);
      expect((await store.readOne((r) => r.contacts.findByBinding('int-1', 'tg:1')))?.id).toBe('c1');
    });
  });
});
