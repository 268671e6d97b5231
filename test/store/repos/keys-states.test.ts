// The key and state repositories (keys, migration states, audit log, usage and ignored members) give
// the same answers on every engine.
import { describe, expect, it } from 'vitest';
import type { ApiKey } from '../../../src/store/repos/keys.js';
import type { UsageIncrement } from '../../../src/store/repos/states.js';
import { onEachEngine } from '../../support/engines.js';
import { aKey } from '../../support/records.js';

const key = (id: string, integrationId = 'int-1', createdAt = '2026-11-22T00:00:00.000Z'): ApiKey =>
  aKey(id, { integrationId, createdAt });

const usage = (
  route: string,
  hour: string,
  calls: number,
  okCalls: number,
  lastSeen: string,
  lastOk: string | null,
): UsageIncrement => ({
  integrationId: 'int-1',
  interface: 'v1',
  route,
  hour,
  calls,
  lastSeen,
  okCalls,
  lastOk,
});

onEachEngine((_engine, open) => {
  describe('keys', () => {
    it("finds a key by its hash, lists an integration's keys in order, revokes one or all live ones", async (context) => {
      const store = await open();
      if (!store) return context.skip();
      await store.transact(async (tx) => {
        await tx.keys.insert(key('k2', 'int-1', '2026-11-22T00:00:01.000Z'));
        await tx.keys.insert(key('k1'));
        await tx.keys.insert(key('k3'));
        await tx.keys.insert(key('other', 'int-2'));
      });
      expect(await store.readOne((r) => r.keys.findByHash('hash-k1'))).toEqual(key('k1'));
      // A second key of one hash is refused without failing the unit: the unit that tried goes on.
      expect(await store.transact((tx) => tx.keys.insert({ ...key('k9'), hash: 'hash-k1' }))).toBe(false);
      expect(await store.readOne((r) => r.keys.findByHash('hash-k1'))).toEqual(key('k1'));
      expect(await store.readOne((r) => r.keys.findByHash('nope'))).toBeNull();
      expect((await store.snapshot((r) => r.keys.listForIntegration('int-1'))).map((k) => k.id)).toEqual([
        'k1',
        'k3',
        'k2',
      ]);
      expect(await store.transact((tx) => tx.keys.revoke('k1', 't1'))).toBe(true);
      expect(await store.transact((tx) => tx.keys.revoke('k1', 't2'))).toBe(false);
      expect(await store.transact((tx) => tx.keys.revokeAll('int-1', 't3'))).toBe(2);
      expect((await store.snapshot((r) => r.keys.listForIntegration('int-1'))).map((k) => [k.id, k.revokedAt])).toEqual(
        [
          ['k1', 't1'],
          ['k3', 't3'],
          ['k2', 't3'],
        ],
      );
      expect((await store.readOne((r) => r.keys.findByHash('hash-other')))?.revokedAt).toBeNull();
    });

    it('lists when each key was last used, keeping the latest whatever order the uses are written in', async (context) => {
      const store = await open();
      if (!store) return context.skip();
      await store.transact(async (tx) => {
        await tx.keys.insert(key('k1'));
        await tx.keys.insert(key('k2', 'int-1', '2026-11-22T00:00:01.000Z'));
      });
      const lastUsed = async () =>
        (await store.snapshot((r) => r.keys.listForIntegration('int-1'))).map((k) => [k.id, k.lastUsedAt]);
      expect(await lastUsed()).toEqual([
        ['k1', null],
        ['k2', null],
      ]);
      await store.transact((tx) =>
        tx.keys.markUsed([
          { keyId: 'k2', at: '2026-11-22T10:00:00.000Z' },
          { keyId: 'k1', at: '2026-11-22T09:00:00.000Z' },
        ]),
      );
      // A replica's older flush arriving later does not move it back.
      await store.transact((tx) =>
        tx.keys.markUsed([
          { keyId: 'k2', at: '2026-11-22T08:00:00.000Z' },
          { keyId: 'k1', at: '2026-11-22T11:00:00.000Z' },
        ]),
      );
      await store.transact((tx) => tx.keys.markUsed([]));
      expect(await lastUsed()).toEqual([
        ['k1', '2026-11-22T11:00:00.000Z'],
        ['k2', '2026-11-22T10:00:00.000Z'],
      ]);
      // The key itself is not written: what the key cache reads is unchanged.
      expect(await store.readOne((r) => r.keys.findByHash('hash-k1'))).toEqual(key('k1'));
    });
  });

  describe('states', () => {
    it('answers legacy for an integration never moved, and the state last set', async (context) => {
      const store = await open();
      if (!store) return context.skip();
      expect(await store.readOne((r) => r.states.get('int-1'))).toBe('legacy');
      await store.transact((tx) => tx.states.set('int-1', 'migrating', 't1'));
      await store.transact((tx) => tx.states.set('int-1', 'switched_off', 't2'));
      expect(await store.readOne((r) => r.states.get('int-1'))).toBe('switched_off');
    });

    it('lists the audit log newest first, ties in the order written, with its details', async (context) => {
      const store = await open();
      if (!store) return context.skip();
      const entry = (id: string, integrationId: string, at: string, details: Record<string, unknown> | null) => ({
        id,
        integrationId,
        action: 'state_changed',
        fromState: 'legacy' as const,
        toState: 'migrating' as const,
        actor: 'ops',
        reason: null,
        details,
        at,
      });
      await store.transact(async (tx) => {
        await tx.states.addAudit(entry('a1', 'int-1', 't1', { prefix: 'lgw_', n: 1 }));
        await tx.states.addAudit(entry('a2', 'int-1', 't2', null));
        await tx.states.addAudit(entry('a3', 'int-1', 't2', { nested: { list: [1, 'x'] } }));
        await tx.states.addAudit(entry('a4', 'int-2', 't3', null));
      });
      const forOne = await store.snapshot((r) => r.states.listAudit('int-1', 10));
      expect(forOne.map((e) => e.id)).toEqual(['a3', 'a2', 'a1']);
      expect(forOne[0]).toEqual(entry('a3', 'int-1', 't2', { nested: { list: [1, 'x'] } }));
      expect(forOne[2]!.details).toEqual({ prefix: 'lgw_', n: 1 });
      expect((await store.snapshot((r) => r.states.listAudit(null, 2))).map((e) => e.id)).toEqual(['a4', 'a3']);
    });

    it('adds usage per hour, sums it since an hour, and keeps the last call and the last success', async (context) => {
      const store = await open();
      if (!store) return context.skip();
      await store.transact((tx) =>
        tx.states.addUsage([
          usage('leads', '2026-11-22T01', 3, 2, '2026-11-22T01:10:00Z', '2026-11-22T01:09:00Z'),
          usage('answers', '2026-11-22T01', 1, 0, '2026-11-22T01:05:00Z', null),
        ]),
      );
      await store.transact((tx) =>
        tx.states.addUsage([
          usage('leads', '2026-11-22T02', 4, 0, '2026-11-22T02:01:00Z', null),
          usage('leads', '2026-11-22T01', 1, 0, '2026-11-22T01:00:00Z', null),
        ]),
      );
      expect(await store.snapshot((r) => r.states.usageSince('int-1', '2026-11-22T02'))).toEqual([
        { route: 'answers', interface: 'v1', calls: 0, lastSeen: '2026-11-22T01:05:00Z', okCalls: 0, lastOk: null },
        {
          route: 'leads',
          interface: 'v1',
          calls: 4,
          lastSeen: '2026-11-22T02:01:00Z',
          okCalls: 0,
          lastOk: '2026-11-22T01:09:00Z',
        },
      ]);
      expect(
        (await store.snapshot((r) => r.states.usageSince('int-1', '2026-11-22T00'))).find((u) => u.route === 'leads'),
      ).toMatchObject({ calls: 8, okCalls: 2 });
      expect(await store.readOne((r) => r.states.lastSeen('int-1', 'v1'))).toBe('2026-11-22T02:01:00Z');
      expect(await store.readOne((r) => r.states.lastSeen('int-1', 'legacy'))).toBeNull();
    });

    it('counts ignored member names, adding new names only below the ceiling', async (context) => {
      const store = await open();
      if (!store) return context.skip();
      await store.transact((tx) => tx.states.countIgnored('int-1', ['stage', 'tags'], 't1', 2));
      await store.transact((tx) => tx.states.countIgnored('int-1', ['tags', 'color'], 't2', 2));
      expect(await store.snapshot((r) => r.states.ignoredFields('int-1'))).toEqual([
        { field: 'stage', calls: 1, lastSeen: 't1' },
        { field: 'tags', calls: 2, lastSeen: 't2' },
      ]);
    });
  });
});
