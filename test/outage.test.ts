// A store outage logs as one episode, not a stack per 503; readiness logs when it changes, not per poll.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from './helper.js';

let gw: Gateway;
let key: string;
beforeAll(async () => {
  gw = await startGateway({ outageQuietMs: 100 });
  key = await gw.issueKey('brightpath:telegram-bot');
});
afterAll(async () => {
  await gw.inspect.refuseWrites(false);
  await gw.close();
});

/** The gateway's log lines so far, parsed. */
const logged = () =>
  readFileSync(join(gw.dir, 'gateway.log'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown> & { msg: string });
const named = (msg: string, from: number) =>
  logged()
    .slice(from)
    .filter((line) => line.msg === msg);

async function waitForLine(msg: string, from: number) {
  for (let waited = 0; waited < 10_000; waited += 50) {
    const found = named(msg, from);
    if (found.length > 0) return found;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no "${msg}" line in the log`);
}

const metric = async (name: string) => {
  const text = (await gw.app.inject({ url: '/metrics' })).body;
  return [...text.matchAll(new RegExp(`^${name}\\{[^}]*\\} (\\d+)$`, 'gm'))].reduce((sum, m) => sum + Number(m[1]), 0);
};

describe('a store outage', () => {
  it('logs one line with the stack when it starts and one with the count of refused requests when the store is back', async () => {
    expect((await gw.submit(key, { event_id: 'outage-0', first_name: 'Before' })).statusCode).toBe(201);
    const from = logged().length;
    await gw.inspect.refuseWrites(true);
    const refused = 4;
    for (let i = 1; i <= refused; i++) {
      const res = await gw.submit(key, { event_id: `outage-${i}`, first_name: 'During' });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({ code: 'service-unavailable' });
    }
    const started = named('store unavailable', from);
    expect(started).toHaveLength(1);
    expect(started[0]).toMatchObject({
      level: 50,
      engine_code: expect.any(String),
      err: { stack: expect.stringContaining('StoreUnavailableError') },
    });
    // Not a line per refused request (the old "storage failure" line carried a stack each time).
    expect(named('storage failure', from)).toEqual([]);
    // One stack for the whole outage. On PostgreSQL the shared rate limits may also fail to settle
    // meanwhile (their statement is a write): their own one line, once, as they go on counting alone.
    const stacks = logged()
      .slice(from)
      .filter((line) => line.err !== undefined);
    expect(stacks.filter((line) => !line.msg.startsWith('shared rate limits unreachable'))).toHaveLength(1);
    expect(stacks.length).toBeLessThanOrEqual(2);
    expect(await metric('lead_gateway_store_unavailable_total')).toBe(refused);

    await gw.inspect.refuseWrites(false);
    const [ended] = await waitForLine('store available again', from);
    expect(ended).toMatchObject({
      level: 30,
      refused,
      duration_ms: expect.any(Number),
      causes: [{ engine_code: started[0]!.engine_code, refused }],
    });
    expect(named('store available again', from)).toHaveLength(1);
    expect((await gw.submit(key, { event_id: 'outage-1', first_name: 'During' })).statusCode).toBe(201);
  });

  it('starts a new outage, logged again, when the store fails after it was back', async () => {
    const from = logged().length;
    await gw.inspect.refuseWrites(true);
    expect((await gw.submit(key, { event_id: 'outage-again', first_name: 'Again' })).statusCode).toBe(503);
    await gw.inspect.refuseWrites(false);
    await waitForLine('store available again', from);
    expect(named('store unavailable', from)).toHaveLength(1);
    expect(named('store available again', from)[0]).toMatchObject({ refused: 1 });
  });
});

/** A store reuses its readiness verdict for a second (READY_REUSE_MS of each engine). */
const nextVerdict = () => new Promise((resolve) => setTimeout(resolve, 1_100));

describe('readiness', () => {
  it('logs when it changes, not at every poll: one line when not ready, one when ready again', async () => {
    const readyz = () => gw.app.inject({ url: '/readyz' });
    expect((await readyz()).statusCode).toBe(200);
    const from = logged().length;
    await gw.inspect.refuseWrites(true);
    await nextVerdict();
    const polls = 5;
    for (let i = 0; i < polls; i++) expect((await readyz()).statusCode).toBe(503);
    const failed = named('readiness check failed', from);
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ level: 40, reason: expect.any(String) });
    await gw.inspect.refuseWrites(false);
    await nextVerdict();
    expect((await readyz()).statusCode).toBe(200);
    expect((await readyz()).statusCode).toBe(200);
    const again = named('ready again', from);
    expect(again).toHaveLength(1);
    expect(again[0]).toMatchObject({
      level: 30,
      was: failed[0]!.reason,
      failed_checks: polls,
      not_ready_ms: expect.any(Number),
    });
  });
});
