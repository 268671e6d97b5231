// The call counters: a flush waits for counts another flush took from memory but has not committed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../helper.js';
import { createUsageRecorder } from '../../src/migration/usage.js';

let gw: Gateway;
beforeAll(async () => (gw = await startGateway()));
afterAll(() => gw.close());

describe('flushing the call counters', () => {
  it("a second flush during the first one resolves only once the first one's counts are stored", async () => {
    const usage = createUsageRecorder(gw.store, 60_000);
    const integration = gw.rules.current().findIntegration('brightpath:telegram-bot')!;
    usage.record(integration.id, 'legacy', 'GET /api/bots/api/boards/', true);
    const first = usage.flush(); // takes the count from memory; its commit is still queued
    await usage.flush(); // finds memory empty: must wait for the first
    const since = new Date(Date.now() - 3_600_000).toISOString().slice(0, 13);
    const rows = await gw.store.snapshot((r) => r.states.usageSince(integration.id, since));
    expect(rows).toEqual([expect.objectContaining({ route: 'GET /api/bots/api/boards/', calls: 1, okCalls: 1 })]);
    await first;
    await usage.close();
  });
});
