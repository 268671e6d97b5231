// What reaches PostgreSQL's socket for one new lead: the statements a unit sends in one turn of the
// event loop leave in one write (src/store/postgres/pool.ts, coalesceWrites), not a write each. Seen
// from a TCP relay between the gateway's pool and the server, which counts what arrives from the pool.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../../src/app.js';
import { createUsageRecorder } from '../../../src/migration/usage.js';
import { createRulesHolder } from '../../../src/rules/loader.js';
import { openPostgresStore, type PostgresStore } from '../../../src/store/postgres/postgres-store.js';
import { clusterOrSkip, freshDatabase, type TestPostgres } from '../../support/postgres.js';

const ADMIN_TOKEN = 'socket-writes-admin-token-0123456789abcdef';
/**
 * A new lead is two round trips (docs/architecture.md, "How a unit is sent on PostgreSQL"): BEGIN, the
 * ledger's look-up, the person locks, the match and the held reads in the first; the held writes, the
 * lead object and COMMIT in the second. One write each, and one spare for a turn split by the answer's
 * reads; a write per statement is 9.
 */
const MOST_WRITES_PER_NEW_LEAD = 3;

let cluster: TestPostgres | null = null;
let store: PostgresStore | null = null;
let relay: ChildProcess | null = null;

beforeAll(async () => void (cluster = await clusterOrSkip()), 60_000);
afterAll(async () => {
  await store?.close();
  relay?.kill('SIGTERM');
  await cluster?.stop();
});

/**
 * The relay, a process of its own: in the gateway's process it would read only once the gateway's
 * turn ended, every write of the turn already waiting in one read. It forwards both ways and counts
 * the chunks each connection sends the server; asked, it answers the most of any connection since
 * it was last asked.
 */
const RELAY = `
const net = require('node:net');
const [port, host] = process.argv.slice(1);
const chunks = new Map();
const server = net.createServer((client) => {
  const upstream = net.connect(Number(port), host);
  for (const s of [client, upstream]) s.on('error', () => {});
  client.on('data', (chunk) => { chunks.set(client, (chunks.get(client) ?? 0) + 1); upstream.write(chunk); });
  upstream.pipe(client);
  client.on('close', () => { chunks.delete(client); upstream.destroy(); });
  upstream.on('close', () => client.destroy());
});
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('message', () => { process.send({ most: Math.max(0, ...chunks.values()) }); for (const k of chunks.keys()) chunks.set(k, 0); });
process.on('disconnect', () => process.exit(0));
`;

const answer = <T>(child: ChildProcess) => new Promise<T>((resolve) => child.once('message', (m) => resolve(m as T)));

describe('socket writes per new lead on PostgreSQL', () => {
  it("a new lead's statements reach the server in one write per round trip, not one per statement", async (context) => {
    if (!cluster) return context.skip();
    const url = new URL(await freshDatabase(cluster.url));
    const relayed = new URL(url);
    relayed.hostname = '127.0.0.1';
    relay = spawn(process.execPath, ['-e', RELAY, url.port, url.hostname], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    relayed.port = String((await answer<{ port: number }>(relay)).port);
    // One connection in the pool, so the unit's statements are all on it; the change feed has its own,
    // counted apart.
    store = await openPostgresStore({ url: relayed.toString(), poolSize: 1 });
    const usage = createUsageRecorder(store, 3_600_000);
    const app = await buildApp(
      { adminToken: ADMIN_TOKEN },
      { store, usage, rules: createRulesHolder(join(import.meta.dirname, '..', '..', '..', 'rules')) },
    );
    const key = (
      await app.inject({
        method: 'POST',
        url: '/admin/v1/integrations/brightpath:telegram-bot/keys',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      })
    ).json<{ key: string }>().key;
    const post = (body: object) =>
      app.inject({
        method: 'POST',
        url: '/api/integrations/v1/leads/',
        headers: { authorization: `Bearer ${key}` },
        payload: body,
      });
    // The key's first use reads it and the integration's state; the next request finds them remembered.
    expect((await post({ event_id: 'warm', external_contact_id: 'telegram:0', first_name: 'Warm' })).statusCode).toBe(
      201,
    );

    relay.send('reset');
    await answer(relay);
    const created = await post({
      event_id: 'e1',
      external_contact_id: 'telegram:1',
      first_name: 'Aziza',
      phone: '+998901234567',
      answers: { goal: 'job', age: 30 },
    });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toMatchObject({ replayed: false, intake_outcome: 'created' });
    // The pool's connection is the one that carried the unit: the most chunks (the feed's beat is one statement).
    relay.send('count');
    const pool = (await answer<{ most: number }>(relay)).most;
    expect(pool).toBeGreaterThan(1);
    expect(pool).toBeLessThanOrEqual(MOST_WRITES_PER_NEW_LEAD);
  });
});
