// Console sessions end after SESSION_IDLE_MS unused and SESSION_MAX_MS in all, on the database's clock
// of record (the rows), whatever the browser keeps; the ended session's row is gone.
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Session } from 'fastify';
import { startGateway, type Gateway } from '../helper.js';
import { addUser } from '../support/console.js';
import { consoleSessionStore, SESSION_IDLE_MS, SESSION_MAX_MS } from '../../src/console/session-store.js';

let gw: Gateway;
beforeAll(async () => {
  gw = await startGateway();
  await addUser(gw, 'dilnoza');
});
afterAll(() => gw.close());

const MINUTE = 60_000;

function sessionsAt(clock: { now: number }) {
  const s = consoleSessionStore(gw.store, () => clock.now);
  return {
    get: promisify(s.get) as (id: string) => Promise<Session | null>,
    set: promisify(s.set) as (id: string, data: Partial<Session>) => Promise<void>,
  };
}

const row = (id: string) =>
  gw.store.snapshot((r) => r.consoleSessions.find(createHash('sha256').update(id).digest('hex')));

describe('console session lifetime', () => {
  it('ends a session left idle longer than SESSION_IDLE_MS', async () => {
    const clock = { now: Date.parse('2026-11-22T08:00:00Z') };
    const s = sessionsAt(clock);
    await s.set('idle-session', { user: 'dilnoza' });
    clock.now += SESSION_IDLE_MS - MINUTE;
    expect(await s.get('idle-session')).toMatchObject({ user: 'dilnoza', workspace: null });
    clock.now += 2 * MINUTE;
    expect(await s.get('idle-session')).toBeNull();
    expect(await row('idle-session')).toBeNull();
  });

  it('keeps a busy session alive until SESSION_MAX_MS after sign-in, then ends it', async () => {
    const clock = { now: Date.parse('2026-11-22T08:00:00Z') };
    const s = sessionsAt(clock);
    await s.set('busy-session', { user: 'dilnoza' });
    const signedIn = clock.now;
    // A request every 20 minutes: never idle, each one moves last_seen_at.
    while (clock.now + 20 * MINUTE < signedIn + SESSION_MAX_MS) {
      clock.now += 20 * MINUTE;
      const data = await s.get('busy-session');
      expect(data).not.toBeNull();
      await s.set('busy-session', data!);
    }
    clock.now = signedIn + SESSION_MAX_MS + MINUTE;
    expect(await s.get('busy-session')).toBeNull();
  });

  it('does not bring back a session signed out while one of its requests was in flight', async () => {
    const clock = { now: Date.parse('2026-11-22T08:00:00Z') };
    const s = sessionsAt(clock);
    await s.set('raced-session', { user: 'dilnoza' });
    clock.now += 5 * MINUTE;
    const inFlight = await s.get('raced-session');
    await promisify(consoleSessionStore(gw.store).destroy)('raced-session');
    await s.set('raced-session', inFlight!);
    expect(await row('raced-session')).toBeNull();
    expect(await s.get('raced-session')).toBeNull();
  });

  it('writes last_seen_at at most once a minute per session', async () => {
    const clock = { now: Date.parse('2026-11-22T08:00:00Z') };
    const s = sessionsAt(clock);
    await s.set('quiet-session', { user: 'dilnoza' });
    clock.now += 30_000;
    await s.set('quiet-session', (await s.get('quiet-session'))!);
    expect((await row('quiet-session'))!.lastSeenAt).toBe('2026-11-22T08:00:00.000Z');
    clock.now += 31_000;
    await s.set('quiet-session', (await s.get('quiet-session'))!);
    expect((await row('quiet-session'))!.lastSeenAt).toBe('2026-11-22T08:01:01.000Z');
  });
});
