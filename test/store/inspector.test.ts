// The test inspector answers its named questions alike on every engine: the suite's assertions about
// stored records mean the same on SQLite and on PostgreSQL.
import { expect, it } from 'vitest';
import { StoreUnavailableError, type Store } from '../../src/store/store.js';
import { inspect } from '../support/inspect.js';
import { onEachEngine } from '../support/engines.js';

const seed = (store: Store) =>
  store.transact(async (tx) => {
    await tx.contacts.insert({
      id: 'c1',
      workspaceId: 'ws-1',
      firstName: 'Ann',
      lastName: null,
      phone: '+491',
      email: null,
      createdAt: 't',
      updatedAt: 't',
    });
    await tx.leads.insert({
      id: 'l1',
      workspaceId: 'ws-1',
      contactId: 'c1',
      integrationId: 'int-1',
      origin: 'legacy',
      firstName: 'Ann',
      lastName: null,
      phone: null,
      email: null,
      notes: null,
      source: null,
      invitedBy: null,
      stageId: null,
      statusId: null,
      groupId: null,
      assignedTo: null,
      createdBy: null,
      closedBy: null,
      closedAt: null,
      closeOutcome: null,
      closeReason: null,
      extraData: { person_id: 7 },
      createdAt: 't1',
      updatedAt: 't1',
      deletedAt: null,
    });
    for (const [id, eventId, review] of [
      ['s1', 'e-1', false],
      ['s2', 'e-2', true],
      ['s3', 'x-3', false],
    ] as const) {
      await tx.submissions.insert({
        id,
        integrationId: 'int-1',
        endpoint: 'leads',
        eventId,
        fingerprint: 'f',
        body: { event_id: eventId },
        contactId: 'c1',
        leadId: 'l1',
        outcome: { outcome: 'created' },
        needsReview: review,
        reviewReason: null,
        createdAt: 't',
      });
    }
    await tx.fieldValues.put({
      id: 'v1',
      leadId: 'l1',
      fieldId: 'f1',
      text: null,
      decimal: null,
      bool: true,
      date: null,
      datetime: null,
      optionId: null,
      optionIds: ['o1', 'o2'],
      writtenBy: { kind: 'integration', ref: 'int-1' },
      updatedAt: 't',
    });
    await tx.leads.addPayment({ id: 'p1', leadId: 'l1', amountMinor: 1250n, note: null, createdAt: 't' });
  });

onEachEngine((_engine, open) => {
  it('counts and lists records by their domain members, JSON, flags and money included', async (context) => {
    const store = await open();
    if (!store) return context.skip();
    await seed(store);
    const db = inspect(store);
    expect(await db.submissions.count()).toBe(3);
    expect(await db.submissions.count({ eventId: { like: 'e-%' } })).toBe(2);
    expect(await db.submissions.count({ needsReview: true })).toBe(1);
    expect(await db.submissions.count({ eventId: { in: ['e-1', 'x-3', 'nope'] } })).toBe(2);
    expect(await db.submissions.count({ eventId: { in: [] } })).toBe(0);
    expect(await db.submissions.list({ eventId: 'e-2' }, ['eventId', 'body', 'outcome'])).toEqual([
      { eventId: 'e-2', body: { event_id: 'e-2' }, outcome: { outcome: 'created' } },
    ]);
    expect(await db.leads.list({ id: 'l1' }, ['id', 'extraData', 'deletedAt'])).toEqual([
      { id: 'l1', extraData: { person_id: 7 }, deletedAt: null },
    ]);
    expect(await db.leads.count({ deletedAt: null, origin: 'legacy' })).toBe(1);
    expect(await db.fieldValues.list({ leadId: 'l1' }, ['fieldId', 'optionIds'])).toEqual([
      { fieldId: 'f1', optionIds: ['o1', 'o2'] },
    ]);
    expect(await db.fieldValues.count({ bool: true })).toBe(1);
    expect(await db.leadPayments.list({}, ['amountMinor'])).toEqual([{ amountMinor: 1250 }]);
    expect(await db.contacts.list({ phone: '+491' }, ['id'])).toEqual([{ id: 'c1' }]);
    expect(await db.dump('contact_bindings')).toEqual([]);
    expect((await db.dump('submissions')).map((row) => row[0])).toEqual(['s1', 's2', 's3']);
  });

  it('makes the database refuse writes and take them again, and drops tables under the store', async (context) => {
    const store = await open();
    if (!store) return context.skip();
    await seed(store);
    const db = inspect(store);
    await db.refuseWrites(true);
    await expect(
      store.transact((tx) =>
        tx.legacyTags.ensure({ workspaceId: 'w', id: '1', name: 'n', color: null, createdAt: 't' }),
      ),
    ).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(await store.readOne((r) => r.leads.get('l1'))).toMatchObject({ id: 'l1' });
    await db.refuseWrites(false);
    await store.transact((tx) =>
      tx.legacyTags.ensure({ workspaceId: 'w', id: '1', name: 'n', color: null, createdAt: 't' }),
    );
    await db.dropTables('lead_comments');
    const failure = await store.transact((tx) => tx.leads.commentsCount('l1')).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect(failure).not.toBeInstanceOf(StoreUnavailableError);
  });
});
