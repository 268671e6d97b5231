// SIGTERM under load to a real child process: it drains, exits 0, and every acknowledged lead is stored.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../src/store/open-store.js';
import { inspect } from '../support/inspect.js';
import { describe, expect, it } from 'vitest';
import { DEMO_V1_KEY as DEMO_KEY, spawnGateway } from '../support/child-gateway.js';

describe('graceful shutdown', () => {
  it('finishes in-flight requests on SIGTERM and loses no acknowledged lead (regression: keep-alive connections of in-flight requests held close() for 72 s)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-shutdown-'));
    const db = join(dir, 'g.db');
    const gw = await spawnGateway({
      env: { DATABASE_PATH: db, DEMO_MODE: 'true', RATE_LIMIT_PER_MINUTE: '1000000' },
      capture: true,
    });
    const address = gw.address;

    // Eight clients send new leads back to back; SIGTERM lands while they are busy.
    const acknowledged: string[] = [];
    let stop = false;
    let sent = 0;
    const client = async (c: number) => {
      for (let i = 0; !stop && i < 2_000; i++) {
        const eventId = `shutdown-${c}-${i}`;
        sent++;
        try {
          const res = await fetch(`${address}/api/integrations/v1/leads/`, {
            method: 'POST',
            headers: { authorization: `Bearer ${DEMO_KEY}`, 'content-type': 'application/json' },
            body: JSON.stringify({ event_id: eventId, first_name: 'Load' }),
          });
          if (res.status === 201) acknowledged.push(eventId);
          await res.arrayBuffer();
        } catch {
          return; // connection refused or closed: the gateway has stopped accepting
        }
      }
    };
    const clients = Array.from({ length: 8 }, (_, c) => client(c));
    await new Promise((resolve) => setTimeout(resolve, 400));
    const code = await gw.stop('SIGTERM');
    stop = true;
    await Promise.all(clients);

    expect(code).toBe(0);
    expect(gw.output()).toMatch(/stopping: draining in-flight requests/);
    expect(acknowledged.length).toBeGreaterThan(10);
    const store = await openStore({ engine: 'sqlite', path: db, synchronous: 'FULL', mustExist: true });
    const stored = new Set(
      (await inspect(store).submissions.list({ eventId: { like: 'shutdown-%' } }, ['eventId'])).map((r) => r.eventId),
    );
    await store.close();
    expect(acknowledged.filter((e) => !stored.has(e))).toEqual([]);
    expect(sent).toBeGreaterThanOrEqual(acknowledged.length);
  }, 40_000);
});
