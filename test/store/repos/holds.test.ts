// A person and its latest lead found and locked at once (repos/holds.ts), on every engine: what a unit
// gets is what the reads one after the other gave, and a unit that waited for a lock sees what the
// lock's holder committed meanwhile (on PostgreSQL each read after a lock is its own statement, with
// its own snapshot, though all are sent at once). On SQLite the single writer gives the same order.
import { expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Repos, Store } from '../../../src/store/store.js';
import type { FieldValue } from '../../../src/store/repos/field-values.js';
import { onEachEngine } from '../../support/engines.js';
import { aContact, aFieldValue, aLead } from '../../support/records.js';

/** How long the first unit holds its locks: long enough for the second to ask for them meanwhile. */
const HOLD_MS = 100;

const aValue = (id: string, leadId: string, fieldId: string, text: string): FieldValue =>
  aFieldValue(leadId, fieldId, { id, text, writtenBy: { kind: 'employee', ref: 'jasur' }, updatedAt: 't2' });

/** Contact c1 (phone and binding tg:1 through int-1) with its lead l1 and a value of field f1 on it. */
async function withOnePerson(store: Store): Promise<void> {
  await store.transact(async (tx) => {
    await tx.contacts.insert(aContact('c1', { phone: '+998901234567' }));
    await tx.contacts.bindNew('int-1', 'tg:1', 'c1', 't1');
    await tx.leads.insert(aLead('l1'));
    await tx.fieldValues.put(aValue('v1', 'l1', 'f1', 'first'));
  });
}

/** Unit A runs `first` and holds its locks a while; unit B, started once A holds them, runs `second`. */
async function contend<T>(
  store: Store,
  first: (tx: Repos) => Promise<unknown>,
  second: (tx: Repos) => Promise<T>,
): Promise<T> {
  let held!: () => void;
  const holding = new Promise<void>((resolve) => (held = resolve));
  const a = store.transact(async (tx) => {
    await first(tx);
    held();
    await sleep(HOLD_MS);
  });
  await holding;
  const [, b] = await Promise.all([a, store.transact(second)]);
  return b;
}

const keys = { externalId: null, phone: '+998901234567', email: null };

onEachEngine((engine, open) => {
  it('a person found by a key: the match, its row, its latest lead and the values asked for; nothing for one not found', async (context) => {
    const store = await open();
    if (!store) return context.skip();
    await withOnePerson(store);
    const held = await store.transact((tx) => tx.holds.person('ws-1', 'int-1', keys, ['f1', 'f2']));
    expect(held).toMatchObject({
      found: { contact: { id: 'c1' }, by: 'phone' },
      locked: { id: 'c1', phone: '+998901234567' },
      latest: { id: 'l1' },
    });
    expect(held.values.map((v) => [v.fieldId, v.text])).toEqual([['f1', 'first']]);
    const byBinding = await store.transact((tx) =>
      tx.holds.person('ws-1', 'int-1', { ...keys, externalId: 'tg:1' }, []),
    );
    expect(byBinding).toMatchObject({ found: { by: 'binding' }, latest: { id: 'l1' }, values: [] });
    const none = await store.transact((tx) =>
      tx.holds.person('ws-1', 'int-1', { externalId: 'tg:2', phone: '+998900000000', email: null }, ['f1']),
    );
    expect(none).toEqual({ found: null, locked: null, latest: null, values: [] });
    // A unit after one that found nobody finds its own person: nothing is carried over between units.
    expect((await store.transact((tx) => tx.holds.binding('int-1', 'tg:1', ['f1']))).values).toHaveLength(1);
    expect(await store.transact((tx) => tx.holds.binding('int-1', 'tg:2', ['f1']))).toEqual({
      contact: null,
      latest: null,
      values: [],
    });
    // Outside a unit PostgreSQL's statements would each run in a transaction of their own, on any
    // connection, and find nothing: refused rather than wrong.
    const outside = store.readOne((r) => r.holds.binding('int-1', 'tg:1', ['f1']));
    if (engine === 'postgres') await expect(outside).rejects.toThrow(/inside a unit of work/);
    else expect((await outside).latest?.id).toBe('l1');
  });

  it('a unit that waited for the person’s row sees the lead its holder created meanwhile', async (context) => {
    const store = await open();
    if (!store) return context.skip();
    await withOnePerson(store);
    const held = await contend(
      store,
      async (tx) => {
        await tx.contacts.lock('c1');
        await tx.leads.insert(aLead('l2', { createdAt: 't3' }));
        await tx.contacts.get('c1');
      },
      (tx) => tx.holds.person('ws-1', 'int-1', keys, ['f1']),
    );
    expect(held.latest?.id).toBe('l2');
    expect(held.values).toEqual([]);
  });

  it('a unit that waited for the latest lead sees the value its holder wrote meanwhile', async (context) => {
    const store = await open();
    if (!store) return context.skip();
    await withOnePerson(store);
    const held = await contend(
      store,
      async (tx) => {
        await tx.leads.lock('l1');
        await tx.fieldValues.put(aValue('v2', 'l1', 'f2', 'second'));
        await tx.leads.get('l1');
      },
      (tx) => tx.holds.binding('int-1', 'tg:1', ['f1', 'f2']),
    );
    expect(held.latest?.id).toBe('l1');
    expect(held.values.map((v) => [v.fieldId, v.text]).sort()).toEqual([
      ['f1', 'first'],
      ['f2', 'second'],
    ]);
  });
});
