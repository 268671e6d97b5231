// The event ledger and the contacts give the same answers on every engine; a second record of one
// event is a DuplicateEventError, however close together the two writers are.
import { describe, expect, it } from 'vitest';
import { DuplicateEventError } from '../../../src/store/store.js';
import type { NewSubmission } from '../../../src/store/repos/submissions.js';
import type { Contact, PersonKeys } from '../../../src/store/repos/contacts.js';
import { onEachEngine } from '../../support/engines.js';
import { aContact } from '../../support/records.js';

const submission = (id: string, eventId: string, over: Partial<NewSubmission> = {}): NewSubmission => ({
  id,
  integrationId: 'int-1',
  endpoint: 'leads',
  eventId,
  fingerprint: `fp-${eventId}`,
  body: { event_id: eventId, person: { first_name: 'Ann', phone: '+4917012345678' }, amount: 12.5, tags: ['a', 'b'] },
  contactId: 'c1',
  leadId: 'l1',
  outcome: { outcome: 'created', lead_id: 'l1' },
  needsReview: false,
  reviewReason: null,
  createdAt: '2026-11-22T00:00:00.000Z',
  ...over,
});

const contact = (id: string, over: Partial<Contact> = {}): Contact =>
  aContact(id, { createdAt: 't0', updatedAt: 't0', ...over });

onEachEngine((_engine, open) => {
  describe('submissions', () => {
    it('finds a recorded event with its outcome as given, and its body apart', async (context) => {
      const store = await open();
      if (!store) return context.skip();
      await store.transact((tx) => tx.submissions.insert(submission('s1', 'e1')));
      const { body, ...recorded } = submission('s1', 'e1');
      // A replay compares fingerprints: the body is not read with the event, only for a 409's paths.
      expect(await store.readOne((r) => r.submissions.find('int-1', 'leads', 'e1'))).toStrictEqual(recorded);
      expect(await store.readOne((r) => r.submissions.firstBody('s1'))).toStrictEqual(body);
      expect(await store.readOne((r) => r.submissions.firstBody('no-such-event'))).toBeNull();
      expect(await store.readOne((r) => r.submissions.find('int-1', 'answers', 'e1'))).toBeNull();
      expect(await store.readOne((r) => r.submissions.find('int-2', 'leads', 'e1'))).toBeNull();
    });

    it('refuses a second record of the event with DuplicateEventError, and the unit stands undone', async (context) => {
      const store = await open();
      if (!store) return context.skip();
      await store.transact((tx) => tx.submissions.insert(submission('s1', 'e1')));
      const second = store.transact(async (tx) => {
        await tx.keys.insert({
          id: 'k',
          integrationId: 'int-1',
          kind: 'v1',
          prefix: '',
          hash: 'h',
          createdAt: 't',
          createdBy: 'x',
          revokedAt: null,
        });
        await tx.submissions.insert(submission('s2', 'e1'));
      });
      await expect(second).rejects.toBeInstanceOf(DuplicateEventError);
      expect(await store.readOne((r) => r.keys.findByHash('h'))).toBeNull();
      // The same event_id on the other endpoint is another event.
      await store.transact((tx) => tx.submissions.insert(submission('s3', 'e1', { endpoint: 'answers' })));
    });

    it('lets exactly one of several writers racing with one event record it', async (context) => {
      const store = await open();
      if (!store) return context.skip();
      const results = await Promise.allSettled(
        [1, 2, 3, 4].map((i) => store.transact((tx) => tx.submissions.insert(submission(`s${i}`, 'race')))),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(DuplicateEventError);
    });

    it("lists the integration's submissions needing review, newest first, and tells which lead it submitted to", async (context) => {
      const store = await open();
      if (!store) return context.skip();
      await store.transact(async (tx) => {
        await tx.submissions.insert(
          submission('s1', 'e1', { needsReview: true, reviewReason: 'ambiguous', createdAt: 't1' }),
        );
        await tx.submissions.insert(
          submission('s2', 'e2', { needsReview: true, reviewReason: 'ambiguous', createdAt: 't2', leadId: 'l2' }),
        );
        await tx.submissions.insert(submission('s3', 'e3', { createdAt: 't3', leadId: 'l3', endpoint: 'answers' }));
      });
      expect(
        (await store.snapshot((r) => r.submissions.listNeedingReview('int-1', 10))).map((s) => [
          s.id,
          s.needsReview,
          s.reviewReason,
        ]),
      ).toEqual([
        ['s2', true, 'ambiguous'],
        ['s1', true, 'ambiguous'],
      ]);
      expect(await store.readOne((r) => r.submissions.submittedTo('int-1', 'l2'))).toBe(true);
      expect(await store.readOne((r) => r.submissions.submittedTo('int-2', 'l2'))).toBe(false);
      expect(await store.readOne((r) => r.submissions.submittedTo('int-1', 'l3'))).toBe(false); // an answers submission
    });
  });

  describe('contacts', () => {
    it('finds a person by binding, phone and e-mail (any case), the most recently active first', async (context) => {
      const store = await open();
      if (!store) return context.skip();
      await store.transact(async (tx) => {
        await tx.contacts.insert(contact('c1', { phone: '+491', email: 'Ann@Example.com', updatedAt: 't1' }));
        await tx.contacts.insert(contact('c2', { phone: '+491', updatedAt: 't2' }));
        await tx.contacts.insert(contact('c3', { workspaceId: 'ws-2', email: 'ann@example.com', updatedAt: 't3' }));
        expect(await tx.contacts.bind('int-1', 'ext-1', 'c1', 't1')).toBe(true);
        // A binding, once made, stays; the second is told so, never silently dropped.
        expect(await tx.contacts.bind('int-1', 'ext-1', 'c2', 't2')).toBe(false);
      });
      expect((await store.readOne((r) => r.contacts.findByBinding('int-1', 'ext-1')))?.id).toBe('c1');
      expect(await store.readOne((r) => r.contacts.findByBinding('int-2', 'ext-1'))).toBeNull();
      // The phone alone, the e-mail alone (case-insensitive), each within its workspace, as a submission matches.
      const by = (workspaceId: string, keys: Partial<PersonKeys>) =>
        store
          .readOne((r) =>
            r.contacts.match(workspaceId, 'int-9', { externalId: null, phone: null, email: null, ...keys }),
          )
          .then((m) => m && { id: m.contact.id, by: m.by });
      expect(await by('ws-1', { phone: '+491' })).toEqual({ id: 'c2', by: 'phone' });
      expect(await by('ws-1', { email: 'ANN@example.COM' })).toEqual({ id: 'c1', by: 'email' });
      expect(await by('ws-2', { email: 'Ann@Example.com' })).toEqual({ id: 'c3', by: 'email' });
      expect(await store.readOne((r) => r.contacts.get('c1'))).toEqual(
        contact('c1', { phone: '+491', email: 'Ann@Example.com', updatedAt: 't1' }),
      );
      expect(await store.transact((tx) => tx.contacts.lock('c1'))).toEqual(
        contact('c1', { phone: '+491', email: 'Ann@Example.com', updatedAt: 't1' }),
      );
      expect(await store.transact((tx) => tx.contacts.lock('nobody'))).toBeNull();
    });

    it('fills only the members that are empty', async (context) => {
      const store = await open();
      if (!store) return context.skip();
      await store.transact((tx) => tx.contacts.insert(contact('c1', { phone: '+491' })));
      await store.transact((tx) =>
        tx.contacts.fillEmpty('c1', { phone: '+492', lastName: 'Lee', email: 'Lee@X.org' }, 't5'),
      );
      expect(await store.readOne((r) => r.contacts.get('c1'))).toEqual(
        contact('c1', { phone: '+491', lastName: 'Lee', email: 'Lee@X.org', updatedAt: 't5' }),
      );
      const byEmail = await store.readOne((r) =>
        r.contacts.match('ws-1', 'int-9', { externalId: null, phone: null, email: 'lee@x.org' }),
      );
      expect(byEmail?.contact.id).toBe('c1');
    });
  });
});
