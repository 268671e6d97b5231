// The replica set on PostgreSQL: what each process records about its rules, requests to reload heard
// by every other process (not by the one asking), and a request missed while a process's feed was
// down, told to it once it is back; a record survives the process registering anew.
import { appendFileSync, cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRulesHolder } from '../../../src/rules/loader.js';
import { shareRules } from '../../../src/rules/replicas.js';
import { StoreUnavailableError } from '../../../src/store/store.js';
import { openPostgresStore, type PostgresStore } from '../../../src/store/postgres/postgres-store.js';
import { aloneReplicaSet, type RulesRecord } from '../../../src/store/replicas.js';
import { clusterOrSkip, freshDatabase, type TestPostgres } from '../../support/postgres.js';

let cluster: TestPostgres | null = null;
const stores: PostgresStore[] = [];
beforeAll(async () => void (cluster = await clusterOrSkip({ own: true })), 60_000);
afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()));
  await cluster?.stop();
});

const log = { warn: () => {}, info: () => {} };
async function twoReplicas(): Promise<[PostgresStore, PostgresStore]> {
  const url = await freshDatabase(cluster!.url);
  const a = await openPostgresStore({ url, poolSize: 2, log });
  const b = await openPostgresStore({ url, poolSize: 2, log });
  stores.push(a, b);
  return [a, b];
}
const until = async (check: () => Promise<boolean> | boolean, ms = 5_000) => {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
};
const rulesOf = async (store: PostgresStore, id: string) =>
  (await store.replicas.live()).find((r) => r.id === id)?.rules;
const record = (version: string, reloadError: RulesRecord['reloadError'] = null): RulesRecord => ({
  version,
  loadedAt: '2026-11-22T07:00:00.000Z',
  reloadError,
});

describe('the replica set', () => {
  it('lists each process with host, pid and the rules it records; null rules for one that runs none', async (context) => {
    if (!cluster) return context.skip();
    const [a, b] = await twoReplicas();
    await a.replicas.record(
      record('aaaaaaaaaaaa', { at: '2026-11-22T07:01:00.000Z', problems: ['rules/x.yaml: line 1: bad'] }),
    );
    const live = await b.replicas.live();
    expect(live.map((r) => r.id)).toEqual([a.replicas.self, b.replicas.self].sort());
    const mine = live.find((r) => r.id === a.replicas.self)!;
    expect(mine).toMatchObject({
      pid: process.pid,
      rules: record('aaaaaaaaaaaa', { at: '2026-11-22T07:01:00.000Z', problems: ['rules/x.yaml: line 1: bad'] }),
    });
    expect(live.find((r) => r.id === b.replicas.self)!.rules).toBeNull();
  });

  it('hands a reload request to every other process, never to the one asking, and records the answer', async (context) => {
    if (!cluster) return context.skip();
    const [a, b] = await twoReplicas();
    const heard = { a: [] as number[], b: [] as number[] };
    a.replicas.onReloadAsked((n) => heard.a.push(n));
    b.replicas.onReloadAsked((n) => void (heard.b.push(n), b.replicas.record(record('bbbbbbbbbbbb'), n)));
    const first = await a.replicas.askReload();
    const second = await a.replicas.askReload();
    expect(second).toBe(first + 1);
    await until(async () => (await a.replicas.live()).find((r) => r.id === b.replicas.self)!.answered === second);
    expect(heard).toEqual({ a: [], b: [first, second] });
  });

  it('tells a process of the newest request made while its feed was down, once it is back, and keeps its record when it registers anew', async (context) => {
    if (!cluster) return context.skip();
    const [a, b] = await twoReplicas();
    await b.replicas.record(record('cccccccccccc'));
    const heard: number[] = [];
    b.replicas.onReloadAsked((n) => heard.push(n));
    await a.pool.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'lead-gateway change feed' AND datname = current_database()",
    );
    // Asked on the pool while no feed listens: nobody hears it now.
    const missed = await a.replicas.askReload();
    await until(() => heard.length > 0);
    expect(heard).toEqual([missed]);
    // Removed as silent, and registered again by its next heartbeat: its rules are written again.
    await a.pool.query('DELETE FROM replicas WHERE id = $1', [b.replicas.self]);
    await until(async () => (await rulesOf(a, b.replicas.self))?.version === 'cccccccccccc');
  });

  it('writes a record that failed on a live feed connection again at the next heartbeat', async (context) => {
    if (!cluster) return context.skip();
    const [a, b] = await twoReplicas();
    await b.replicas.record(record('ffffffffffff'));
    // Regression: a record whose statement timed out (its row locked) stayed unwritten while the
    // connection lived on, and the others saw the old version (drift, "no answer") until it reconnected.
    const locker = await a.pool.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('SELECT 1 FROM replicas WHERE id = $1 FOR UPDATE', [b.replicas.self]);
      await b.replicas.record(record('gggggggggggg'), 7);
      await locker.query('ROLLBACK');
    } finally {
      locker.release();
    }
    await until(async () => (await rulesOf(a, b.replicas.self))?.version === 'gggggggggggg', 8_000);
    expect((await a.replicas.live()).find((r) => r.id === b.replicas.self)!.answered).toBeGreaterThanOrEqual(7);
  });

  it('is this process alone on an engine of one file', async () => {
    const alone = aloneReplicaSet();
    await alone.record(record('dddddddddddd'), 3);
    expect(await alone.live()).toEqual([
      expect.objectContaining({ id: alone.self, pid: process.pid, rules: record('dddddddddddd'), answered: 3 }),
    ]);
    expect(await alone.askReload()).toBe(1);
  });

  // Last: it takes the server away.
  it('reloads the replica asked even when the database cannot be reached, and answers unavailable so the caller retries', async (context) => {
    if (!cluster?.server) return context.skip();
    const [a] = await twoReplicas();
    const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-replica-set-'));
    try {
      cpSync(join(import.meta.dirname, '..', '..', '..', 'rules'), dir, { recursive: true });
      const rules = createRulesHolder(dir);
      const shared = await shareRules({ replicas: a.replicas, rules });
      const before = rules.version().version;
      appendFileSync(join(dir, 'brightpath.yaml'), '\n# edited\n');
      await cluster.server.down();
      try {
        await expect(shared.reloadEverywhere()).rejects.toBeInstanceOf(StoreUnavailableError);
        expect(rules.version().version).not.toBe(before);
        expect(await shared.recentSurvey()).toBeNull();
      } finally {
        shared.close();
        await cluster.server.up();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
