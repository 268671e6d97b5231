// The scheduled switch-off (src/migration/schedule.ts) on three gateway processes on one PostgreSQL
// database, each looking every second: carried out exactly once, as the actor `schedule`, whichever
// replica gets there first; refused with its reasons when not ready, and tried again `retry_minutes`
// later (by a replica whose clock runs that far ahead); forced when asked; carried out by the others
// when the replica doing it is killed mid-way; carried out at start, once, when its moment passed while
// no replica ran (docs/runbook.md, "2c. The scheduled switch-off"). The file runs in
// `npm run test:resilience`, not in `npm test` (docs/testing.md).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildGateway } from '../support/child-gateway.js';
import { clusterOrSkip, freshDatabase, type TestPostgres } from '../support/postgres.js';
import {
  admin,
  auditOf,
  keyFor,
  legacyCall,
  logLines,
  replicaEnv,
  skewedClock,
  sleep,
  startReplica,
  startReplicas,
  until,
  v1Lead,
} from '../support/gateway-replicas.js';
import type { ScheduleView } from '../../src/migration/schedule-view.js';

const TELEGRAM = 'brightpath:telegram-bot';
const WEBSITE = 'brightpath:website-form';
const SMILE = 'smile-dental:booking-form';
const PATH = (handle: string) => `/admin/v1/integrations/${handle}/switch-off/schedule`;
const RETRY_MINUTES = 5;

let cluster: TestPostgres | null = null;
beforeAll(async () => void (cluster = await clusterOrSkip()));

const soon = (ms = 2_000) => new Date(Date.now() + ms).toISOString();
const scheduleOf = async (r: ChildGateway, handle: string) => (await admin<ScheduleView>(r, 'GET', PATH(handle))).body;
const stateOf = async (r: ChildGateway, handle: string) =>
  (await admin<{ items: { handle: string; state: string }[] }>(r, 'GET', '/admin/v1/integrations')).body.items.find(
    (i) => i.handle === handle,
  )?.state;
const bySchedule = async (r: ChildGateway, handle: string) =>
  (await auditOf(r, handle)).filter((e) => e.actor === 'schedule');
/** The runner's line for an attempt, over the replicas' outputs. */
const attemptLines = (replicas: ChildGateway[], outcome: string) =>
  replicas.flatMap((r) => logLines(r, `scheduled switch-off ${outcome}`));

/** A v1 key and a v1 call that succeeded: ready, if the old interface is quiet. */
async function readyToSwitchOff(r: ChildGateway, handle: string) {
  expect((await v1Lead(r, await keyFor(r, handle, 'keys'))).status).toBe(201);
}

/** Schedules through `r` and waits until it is no longer pending, or has made `attempts` attempts. */
async function scheduleAndWait(r: ChildGateway, handle: string, body: Record<string, unknown>, attempts = 1) {
  const put = await admin<ScheduleView>(r, 'PUT', PATH(handle), { at: soon(), ...body });
  expect(put.status).toBe(200);
  await until(`the schedule of ${handle} attempted`, async () => {
    const view = await scheduleOf(r, handle);
    return view.status !== 'pending' || view.attempts >= attempts;
  });
  // Every replica has looked again since (each every second): none acts a second time.
  await sleep(2_500);
}

describe('a scheduled switch-off on three replicas', () => {
  let replicas: ChildGateway[] = [];
  let env: Record<string, string>;
  beforeAll(async () => {
    if (!cluster) return;
    // The test pause is set, and inert: NODE_ENV is not `test` (main.ts).
    env = { ...replicaEnv(await freshDatabase(cluster.url)), TEST_PAUSE_MID_SWITCH_OFF_MS: '30000' };
    replicas = [await startReplica({ env })];
    replicas.push(...(await startReplicas(2, { env })));
  }, 90_000);
  afterAll(() => Promise.all(replicas.map((r) => r.stop())));

  it('is carried out exactly once when ready, as the actor schedule, whichever replica got there', async (context) => {
    if (!cluster) return context.skip();
    const [a, b, c] = replicas as [ChildGateway, ChildGateway, ChildGateway];
    await readyToSwitchOff(a, WEBSITE);
    await scheduleAndWait(b, WEBSITE, { reason: 'announced' });
    expect(await scheduleOf(c, WEBSITE)).toMatchObject({ status: 'done', attempts: 1, last_refusal: null });
    const entries = await bySchedule(c, WEBSITE);
    expect(entries.map((e) => [e.action, e.to_state])).toEqual([['switched_off', 'switched_off']]);
    for (const r of replicas) expect(await stateOf(r, WEBSITE)).toBe('switched_off');
    expect(attemptLines(replicas, 'switched_off')).toHaveLength(1);
    expect(replicas.flatMap((r) => logLines(r, 'test pause mid switch-off'))).toEqual([]);
  });

  it('is refused when not ready, with its reasons in the schedule and the audit, and tried again retry_minutes later', async (context) => {
    if (!cluster) return context.skip();
    const [a, b, c] = replicas as [ChildGateway, ChildGateway, ChildGateway];
    const legacyKey = await keyFor(a, TELEGRAM, 'keys/import', 'schedule-replicas-legacy-0123456789ab');
    await readyToSwitchOff(b, TELEGRAM);
    // The bot still calls the old interface: not ready for 24 hours.
    expect((await legacyCall(c, legacyKey)).status).toBe(200);
    await scheduleAndWait(a, TELEGRAM, { retry_minutes: RETRY_MINUTES });
    const refused = await scheduleOf(b, TELEGRAM);
    expect(refused).toMatchObject({ status: 'pending', attempts: 1 });
    expect(refused.last_refusal).toMatch(
      /^refused at \S+: the deprecated interface was called at \S+, within the 24 h quiet period$/,
    );
    expect(Date.parse(refused.next_attempt_at!) - Date.parse(refused.last_attempt_at!)).toBe(RETRY_MINUTES * 60_000);
    const entries = await bySchedule(c, TELEGRAM);
    expect(entries.map((e) => e.action)).toEqual(['scheduled_switch_off_refused']);
    expect(entries[0]!.details).toMatchObject({
      reasons: [expect.stringMatching(/^the deprecated interface was called at/)],
      next_attempt_at: refused.next_attempt_at,
    });
    expect(attemptLines(replicas, 'refused')).toHaveLength(1);
    for (const r of replicas) expect(await stateOf(r, TELEGRAM)).toBe('migrating');

    // A replica whose clock is past the next attempt tries again (the others would, that much later).
    const ahead = skewedClock(RETRY_MINUTES * 60_000 + 5_000);
    const late = await startReplica({ env: { ...env, ...ahead.env }, nodeArgs: ahead.nodeArgs });
    try {
      await until('the second attempt', async () => (await scheduleOf(a, TELEGRAM)).attempts === 2);
      await sleep(2_500);
      const again = await scheduleOf(c, TELEGRAM);
      expect(again).toMatchObject({ status: 'pending', attempts: 2 });
      expect(Date.parse(again.last_attempt_at!)).toBeGreaterThanOrEqual(Date.parse(refused.next_attempt_at!));
      expect((await bySchedule(b, TELEGRAM)).map((e) => e.action)).toEqual([
        'scheduled_switch_off_refused',
        'scheduled_switch_off_refused',
      ]);
      expect(logLines(late, 'scheduled switch-off refused')).toHaveLength(1);
      expect(attemptLines(replicas, 'refused')).toHaveLength(1);
    } finally {
      await late.stop();
    }
  });

  it('is carried out when forced, whatever the verdict', async (context) => {
    if (!cluster) return context.skip();
    const [a, b, c] = replicas as [ChildGateway, ChildGateway, ChildGateway];
    // A v1 key never called: not ready.
    await keyFor(a, SMILE, 'keys');
    await scheduleAndWait(b, SMILE, { force: true });
    expect(await scheduleOf(c, SMILE)).toMatchObject({ status: 'done', attempts: 1, force: true });
    expect((await bySchedule(a, SMILE)).map((e) => [e.action, e.to_state])).toEqual([
      ['switched_off_forced', 'switched_off'],
    ]);
    expect(attemptLines(replicas, 'switched_off')).toHaveLength(2);
  });
});

describe('a replica killed while carrying out a scheduled switch-off', () => {
  it('leaves it to the others: one switch-off, one audit entry', async (context) => {
    if (!cluster) return context.skip();
    const env = replicaEnv(await freshDatabase(cluster.url));
    // The victim's clock runs 2 s ahead: it is the first to find the schedule due, and pauses in the
    // middle of carrying it out, holding the integration's lock (TEST_PAUSE_MID_SWITCH_OFF_MS).
    const ahead = skewedClock(2_000);
    const victim = await startReplica({
      env: { ...env, ...ahead.env, NODE_ENV: 'test', TEST_PAUSE_MID_SWITCH_OFF_MS: '30000' },
      nodeArgs: ahead.nodeArgs,
    });
    const others = await startReplicas(2, { env });
    const [b, c] = others as [ChildGateway, ChildGateway];
    await readyToSwitchOff(b, WEBSITE);
    expect((await admin(c, 'PUT', PATH(WEBSITE), { at: soon(4_000) })).status).toBe(200);

    await until('the victim pauses mid-way', () => logLines(victim, 'test pause mid switch-off').length === 1);
    // Written, not committed: nobody sees the switch-off yet.
    expect(await stateOf(b, WEBSITE)).toBe('migrating');
    expect(await scheduleOf(c, WEBSITE)).toMatchObject({ status: 'pending', attempts: 0 });
    victim.child.kill('SIGKILL');
    await victim.exited;

    await until('the others carry it out', async () => (await scheduleOf(b, WEBSITE)).status === 'done');
    await sleep(2_500);
    expect(await scheduleOf(c, WEBSITE)).toMatchObject({ status: 'done', attempts: 1 });
    expect((await bySchedule(c, WEBSITE)).map((e) => e.action)).toEqual(['switched_off']);
    for (const r of others) expect(await stateOf(r, WEBSITE)).toBe('switched_off');
    expect(attemptLines(others, 'switched_off')).toHaveLength(1);
    expect(attemptLines([victim], 'switched_off')).toHaveLength(0);
  }, 90_000);
});

describe('a scheduled switch-off whose moment passed while no replica ran', () => {
  it('is carried out once when three replicas start at once', async (context) => {
    if (!cluster) return context.skip();
    const env = replicaEnv(await freshDatabase(cluster.url));
    const first = await startReplica({ env });
    await readyToSwitchOff(first, WEBSITE);
    const at = soon(3_000);
    expect((await admin(first, 'PUT', PATH(WEBSITE), { at })).status).toBe(200);
    await first.stop();
    if (Date.now() >= Date.parse(at)) throw new Error('the first replica took too long to stop');
    expect(attemptLines([first], 'switched_off')).toHaveLength(0);
    await sleep(Date.parse(at) + 1_000 - Date.now());

    const replicas = await startReplicas(3, { env });
    const started = Date.now();
    await until('carried out at start', async () => (await scheduleOf(replicas[0]!, WEBSITE)).status === 'done');
    await sleep(2_500);
    const entries = await bySchedule(replicas[1]!, WEBSITE);
    expect(entries.map((e) => e.action)).toEqual(['switched_off']);
    // At start: within the first looks of the replicas, each a second.
    expect(Date.parse(entries[0]!.at)).toBeLessThan(started + 3_000);
    expect(await scheduleOf(replicas[2]!, WEBSITE)).toMatchObject({ status: 'done', attempts: 1 });
    expect(attemptLines(replicas, 'switched_off')).toHaveLength(1);
  }, 90_000);
});
