// The locks of a unit of work, on every engine: a second unit asking for a lock another holds goes on
// only after that unit has ended. (On SQLite the single writer gives the same order without locks.)
import { describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Repos, Store } from '../../../src/store/store.js';
import type { PersonKey } from '../../../src/store/repos/locks.js';
import { personLockNames } from '../../../src/store/repos/locks.js';
import { onEachEngine } from '../../support/engines.js';
import { lockLatestLead } from '../../../src/lead/lock.js';
import { aContact, aLead } from '../../support/records.js';
import { runRetention } from '../../../src/retention/retention.js';

/** How long the first unit holds its lock: long enough for the second to ask for it meanwhile. */
const HOLD_MS = 100;

const phone: PersonKey = { kind: 'phone', phone: '+998901234567' };
const email: PersonKey = { kind: 'email', email: 'ann@example.com' };
const binding: PersonKey = { kind: 'binding', integrationId: 'int-1', externalId: 'tg:1' };

/** Unit A takes `first`, holds it; unit B, started once A holds it, takes `second`. The order of what they did. */
async function contend(
  store: Store,
  first: (tx: Repos) => Promise<unknown>,
  second: (tx: Repos) => Promise<unknown>,
): Promise<string[]> {
  const events: string[] = [];
  let held!: () => void;
  const holding = new Promise<void>((resolve) => (held = resolve));
  const a = store.transact(async (tx) => {
    await first(tx);
    events.push('A locked');
    held();
    await sleep(HOLD_MS);
    events.push('A ends');
  });
  await holding;
  const b = store.transact(async (tx) => {
    await second(tx);
    events.push('B locked');
  });
  await Promise.all([a, b]);
  return events;
}

describe('person lock names', () => {
  it('are distinct, sorted, and keep a workspace, an integration and a kind apart', () => {
    const names = personLockNames('ws-1', [phone, email, phone, binding]);
    expect(names).toHaveLength(3);
    expect([...names].sort()).toEqual(names);
    expect(personLockNames('ws-2', [phone])).not.toEqual(personLockNames('ws-1', [phone]));
    expect(personLockNames('ws-1', [{ ...binding, integrationId: 'int-2' }])).not.toEqual(
      personLockNames('ws-1', [binding]),
    );
    expect(personLockNames('ws-1', [{ kind: 'email', email: '+998901234567' }])).not.toEqual(
      personLockNames('ws-1', [phone]),
    );
  });
});

onEachEngine((engine, open) => {
  it('a person key held by one unit: another unit locking it (with other keys) waits until the first ends', async (context) => {
    const store = await open();
    if (!store) return context.skip();
    // The person locks may be sent without waiting for their grant: the unit's next statement (a match,
    // here a read) is what runs once they are held.
    const lockThenRead = (keys: PersonKey[]) => async (tx: Repos) => {
      await tx.locks.persons('ws-1', keys);
      await tx.contacts.get('c-none');
    };
    const events = await contend(store, lockThenRead([phone, binding]), lockThenRead([email, phone]));
    expect(events).toEqual(['A locked', 'A ends', 'B locked']);
  });

  it('an integration held by one unit: another unit locking it waits until the first ends', async (context) => {
    const store = await open();
    if (!store) return context.skip();
    const events = await contend(
      store,
      (tx) => tx.locks.integration('int-1'),
      (tx) => tx.locks.integration('int-1'),
    );
    expect(events).toEqual(['A locked', 'A ends', 'B locked']);
  });

  it("a workspace's created tags held by one unit: another unit locking them waits until the first ends", async (context) => {
    const store = await open();
    if (!store) return context.skip();
    const events = await contend(
      store,
      (tx) => tx.locks.legacyTags('ws-1'),
      (tx) => tx.locks.legacyTags('ws-1'),
    );
    expect(events).toEqual(['A locked', 'A ends', 'B locked']);
  });

  it('the operator names held by one unit: another unit taking a name waits until the first ends', async (context) => {
    const store = await open();
    if (!store) return context.skip();
    const events = await contend(
      store,
      (tx) => tx.locks.operatorNames(),
      (tx) => tx.locks.operatorNames(),
    );
    expect(events).toEqual(['A locked', 'A ends', 'B locked']);
  });

  it('a lead row held by one unit: another unit locking it waits, then reads what the first wrote', async (context) => {
    const store = await open();
    if (!store) return context.skip();
    await store.transact(async (tx) => {
      await tx.contacts.insert(aContact('c1', { createdAt: 't', updatedAt: 't' }));
      await tx.leads.insert(aLead('l1', { createdAt: 't', updatedAt: 't' }));
    });
    let seen: unknown;
    const events = await contend(
      store,
      async (tx) => {
        await tx.leads.lock('l1');
        await tx.leads.update('l1', { notes: 'by A' });
      },
      async (tx) => (seen = (await tx.leads.lock('l1'))?.notes),
    );
    expect(events).toEqual(['A locked', 'A ends', 'B locked']);
    expect(seen).toBe('by A');
  });

  it("a person's latest lead, locked in one statement: a unit waiting for it while it is deleted takes the next one", async (context) => {
    const store = await open();
    if (!store) return context.skip();
    const lead = (id: string, createdAt: string) => ({
      id,
      workspaceId: 'ws-1',
      contactId: 'c1',
      integrationId: 'int-1',
      origin: 'v1' as const,
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
      extraData: null,
      createdAt,
      updatedAt: createdAt,
      deletedAt: null,
    });
    expect(await store.transact((tx) => tx.leads.lockLatestOfContact('c1'))).toBeNull();
    await store.transact(async (tx) => {
      await tx.contacts.insert(aContact('c1', { createdAt: 't', updatedAt: 't' }));
      await tx.leads.insert(lead('l1', 't1'));
      await tx.leads.insert(lead('l2', 't2'));
    });
    let seen: unknown;
    const events = await contend(
      store,
      async (tx) => {
        await tx.leads.lock('l2');
        await tx.leads.update('l2', { deletedAt: 't3' });
      },
      async (tx) => (seen = (await lockLatestLead(tx, 'c1'))?.id),
    );
    expect(events).toEqual(['A locked', 'A ends', 'B locked']);
    expect(seen).toBe('l1');
  });

  it('units locking overlapping keys in any order at once all commit', async (context) => {
    const store = await open();
    if (!store) return context.skip();
    const orders = [
      [phone, email, binding],
      [binding, email, phone],
      [email, phone],
      [binding, phone],
    ];
    await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        store.transact((tx) => tx.locks.persons('ws-1', orders[i % orders.length]!)),
      ),
    );
  });

  it(`a retention run while another holds its lock: ${engine === 'postgres' ? 'does nothing at once (an advisory lock taken without waiting)' : 'runs after it (one writer)'}`, async (context) => {
    const store = await open();
    if (!store) return context.skip();
    const old = {
      integrationId: 'int-1',
      interface: 'v1' as const,
      route: 'POST /x',
      hour: '2020-01-01T00',
      calls: 1,
      lastSeen: '2020-01-01T00:00:00.000Z',
      okCalls: 1,
      lastOk: null,
    };
    await store.transact((tx) => tx.states.addUsage([old]));
    const settings = { usageDays: 30, answersDays: 30 };
    const sessions = { idleMs: 60_000, maxMs: 60_000 };
    const events: string[] = [];
    let held!: () => void;
    const holding = new Promise<void>((resolve) => (held = resolve));
    let bEnded!: () => void;
    const bEnds = new Promise<void>((resolve) => (bEnded = resolve));
    const a = store.transact(async (tx) => {
      expect(await tx.locks.tryRetention()).toBe(true);
      events.push('A locked');
      held();
      // Held until B has answered, however slow the machine (PostgreSQL: B does not wait for it), or
      // HOLD_MS (SQLite: B waits for the one writer, so it cannot answer first).
      await Promise.race([bEnds, sleep(engine === 'postgres' ? 30_000 : HOLD_MS)]);
      events.push('A ends');
    });
    await holding;
    const b = runRetention(store, settings, sessions).then((run) => {
      events.push(run.ran ? 'B ran' : 'B did nothing');
      bEnded();
      return run;
    });
    const [, run] = await Promise.all([a, b]);
    const hours = await store.snapshot((r) => r.states.usagePerHour('int-1', '2020'));
    if (engine === 'postgres') {
      expect(events).toEqual(['A locked', 'B did nothing', 'A ends']);
      expect(run.usage_hours_rolled_up).toBe(0);
      expect(hours).toEqual([{ hour: '2020-01-01T00', interface: 'v1', calls: 1 }]);
      expect((await runRetention(store, settings, sessions)).usage_hours_rolled_up).toBe(1);
    } else {
      expect(events).toEqual(['A locked', 'A ends', 'B ran']);
      expect(hours).toEqual([]);
    }
  });
});
