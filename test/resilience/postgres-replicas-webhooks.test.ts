// Webhooks from three gateway processes on one PostgreSQL (docs/webhooks.md, "Delivery"): a stream of
// state changes sent round-robin to the replicas while one replica is killed holding claims and the
// server is stopped and started again. Every committed change reaches the receiver as one event
// (at least once: duplicates by webhook-id are counted, never a loss), signed; a change refused or
// not committed sends nothing. The killed replica's claims come due again when their lease ends (the
// attempt's timeout and LEASE_MARGIN_MS): the file runs in `npm run test:resilience` (docs/testing.md).
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildGateway } from '../support/child-gateway.js';
import { clusterOrSkip, freshDatabase, type TestPostgres } from '../support/postgres.js';
import { admin, auditOf, replicaEnv, sleep, startReplica, startReplicas, until } from '../support/gateway-replicas.js';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';
import { reportFigures } from './scale.js';

/** Issued keys, one after the other: the main stream of changes. */
const KEYS = 'brightpath:telegram-bot';
/** Switched off and rolled back in turn. */
const FLIP = 'brightpath:website-form';
/** Never given a key: its switch-off and its rollback are refused (409), as is a rollback of KEYS. */
const NEVER = 'smile-dental:booking-form';
const TYPES = ['integration.key_issued', 'integration.switched_off', 'integration.rolled_back'];
/** Calls in the stream; the kill comes after a third of them, the outage after two thirds. */
const CALLS = 45;
const PAUSE_MS = 100;
/** The receiver answers each delivery this late, so that the replicas hold claims while it waits. */
const ANSWER_AFTER_MS = 1_500;
const OUTAGE_MS = 3_000;
/** The attempt's timeout (10 s) and the lease margin (20 s) after the kill, with room to spare. */
const ALL_RECEIVED_WITHIN_MS = 60_000;

/** The audit actions of the changes that send an event, and the event's type. */
const EVENT_OF_ACTION: Record<string, string> = {
  v1_key_issued: 'integration.key_issued',
  switched_off: 'integration.switched_off',
  switched_off_forced: 'integration.switched_off',
  rolled_back: 'integration.rolled_back',
};

let cluster: TestPostgres | null = null;
let url = '';
let replicas: ChildGateway[] = [];
let receiver: Receiver;
const secrets: string[] = [];

beforeAll(async () => {
  cluster = await clusterOrSkip({ own: true });
  if (!cluster?.server) return;
  receiver = await startReceiver(secrets);
  url = await freshDatabase(cluster.url);
  const env = {
    ...replicaEnv(url),
    WEBHOOK_ALLOW_ADDRESSES: '127.0.0.1',
    WEBHOOK_ALLOW_HTTP_HOSTS: '127.0.0.1',
    WEBHOOK_SEND_EVERY_MS: '100',
  };
  // One first, so the others find the schema migrated.
  replicas = [await startReplica({ env })];
  replicas.push(...(await startReplicas(2, { env })));
}, 90_000);
afterAll(async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  await receiver?.close();
  await cluster?.stop();
});

interface Call {
  what: string;
  handle: string;
  status: number;
  body: Record<string, unknown> | null;
  reason?: string;
}

/** One admin call; a network error or the client's timeout is status 0. */
async function change(r: ChildGateway, what: string, handle: string, body: Record<string, unknown>): Promise<Call> {
  try {
    const res = await admin(r, 'POST', `/admin/v1/integrations/${handle}/${what}`, body);
    return {
      what,
      handle,
      status: res.status,
      body: res.body,
      ...(body.reason ? { reason: String(body.reason) } : {}),
    };
  } catch {
    return { what, handle, status: 0, body: null };
  }
}

async function query<T>(sql: string, params: unknown[] = []): Promise<T[]> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    return (await db.query(sql, params)).rows as T[];
  } finally {
    await db.end();
  }
}

/** The deliveries a replica process holds a claim on now. */
const claimsOf = (pid: number) =>
  query<{ id: string }>(
    `SELECT d.id FROM webhook_deliveries d JOIN replicas r ON r.id = d.claimed_by
     WHERE r.pid = $1 AND d.status = 'pending' AND d.claimed_until > $2`,
    [pid, new Date().toISOString()],
  );

interface Event {
  id: string;
  type: string;
  timestamp: string;
  data: { integration: { handle: string }; reason?: string; actor: string };
}

/** What identifies a change: its type, integration and moment (the audit entry's), a rollback's reason. */
const keyOf = (type: string, handle: string, at: string, reason?: string | null) =>
  `${type} ${handle} ${at}${type === 'integration.rolled_back' ? ` ${reason}` : ''}`;

describe('webhooks from three replicas, one killed and the server stopped', () => {
  it('deliver one event per committed change, none for a refused one, at least once', async (context) => {
    if (!cluster?.server) return context.skip();
    const server = cluster.server;
    const endpoint = await admin<{ id: string; secret: string }>(replicas[0]!, 'POST', '/admin/v1/webhooks/endpoints', {
      url: `${receiver.origin}/slow/${ANSWER_AFTER_MS}`,
      event_types: TYPES,
    });
    expect(endpoint.status).toBe(201);
    secrets.push(endpoint.body.secret);
    expect((await change(replicas[1]!, 'keys', FLIP, {})).status).toBe(201);

    const calls: Call[] = [];
    const refusals: Call[] = [];
    let live = [...replicas];
    const victim = replicas[2]!;
    let held: { id: string }[] = [];
    let outage: Promise<void> | null = null;
    let flips = 0;
    for (let i = 0; i < CALLS; i++) {
      const r = live[i % live.length]!;
      if (i === Math.floor(CALLS / 3)) {
        // Killed while it holds a claim (the receiver answers late, so one comes soon).
        await until('the victim holds a claim', async () => (await claimsOf(victim.pid)).length > 0, 10_000);
        await victim.stop('SIGKILL');
        live = live.filter((x) => x !== victim);
        held = await claimsOf(victim.pid);
      }
      if (i === Math.floor((2 * CALLS) / 3))
        outage = (async () => {
          await server.down();
          await sleep(OUTAGE_MS);
          await server.up();
        })();
      switch (i % 5) {
        case 2: {
          // Switched off and rolled back in turn: an answer lost in the outage may make the next one a 409.
          const n = flips++;
          calls.push(
            n % 2 === 0
              ? await change(r, 'switch-off', FLIP, { reason: `switch-off ${n}` })
              : await change(r, 'rollback', FLIP, { reason: `rollback ${n}` }),
          );
          break;
        }
        case 3: {
          const refused = [
            () => change(r, 'switch-off', NEVER, { reason: `refused ${i}` }),
            () => change(r, 'rollback', NEVER, { reason: `refused ${i}` }),
            () => change(r, 'rollback', KEYS, { reason: `refused ${i}` }),
          ][Math.floor(i / 5) % 3]!;
          refusals.push(await refused());
          break;
        }
        default:
          calls.push(await change(r, 'keys', KEYS, {}));
      }
      await sleep(PAUSE_MS);
    }
    await outage;
    // The killed replica held claims: they come due again only when their lease ends.
    expect(held.length).toBeGreaterThan(0);

    // A refusal is a 409 (or the outage's 503): the refused changes are not made.
    expect(refusals.filter((c) => c.status !== 409 && c.status !== 503).map((c) => [c.status, c.body])).toEqual([]);
    expect(refusals.filter((c) => c.status === 409).length).toBeGreaterThan(0);
    // The outage refused some calls: changes not committed.
    expect([...calls, ...refusals].some((c) => c.status === 503)).toBe(true);

    // The committed changes, as the audit log says (a call whose answer was lost may still have committed).
    for (const r of live)
      await until('the replica serves again', async () => (await admin(r, 'GET', '/readyz')).status === 200);
    const committed: string[] = [];
    for (const handle of [KEYS, FLIP, NEVER])
      for (const entry of await auditOf(live[1]!, handle)) {
        const type = EVENT_OF_ACTION[entry.action];
        if (type) committed.push(keyOf(type, handle, entry.at, (entry as { reason?: string | null }).reason));
      }
    // Every change answered 2xx is among them.
    const keyAnswers = calls.filter((c) => c.what === 'keys' && c.status === 201);
    for (const c of keyAnswers)
      expect(committed).toContain(keyOf('integration.key_issued', KEYS, String(c.body!.created_at)));
    for (const c of calls.filter((x) => x.what === 'rollback' && x.status === 200))
      expect(committed.some((k) => k.startsWith('integration.rolled_back') && k.endsWith(` ${c.reason}`))).toBe(true);
    const switchedOff = committed.filter((k) => k.startsWith('integration.switched_off')).length;
    expect(switchedOff).toBeGreaterThanOrEqual(calls.filter((x) => x.what === 'switch-off' && x.status === 200).length);

    // Every committed change reaches the receiver: de-duplicated by webhook-id, one event each.
    const unique = () => {
      const byId = new Map<string, string>();
      for (const r of receiver.received) byId.set(r.headers['webhook-id']!, r.body);
      return byId;
    };
    const receivedKeys = () =>
      [...unique().values()].map((body) => {
        const e = JSON.parse(body) as Event;
        return keyOf(e.type, e.data.integration.handle, e.timestamp, e.data.reason);
      });
    const missing = () => {
      const left = [...receivedKeys()];
      return committed.filter((k) => {
        const at = left.indexOf(k);
        if (at === -1) return true;
        left.splice(at, 1);
        return false;
      });
    };
    const started = Date.now();
    try {
      await until('every committed change is received', () => missing().length === 0, ALL_RECEIVED_WITHIN_MS);
    } catch (error) {
      expect(missing()).toEqual([]);
      throw error;
    }
    const waited = Date.now() - started;
    // Exactly those: nothing for a refused or uncommitted change, each change once.
    expect(receivedKeys().sort()).toEqual([...committed].sort());
    expect(receivedKeys().filter((k) => k.includes(` ${NEVER} `))).toEqual([]);
    expect(receivedKeys().filter((k) => k.startsWith(`integration.rolled_back ${KEYS} `))).toEqual([]);
    // Every request signed, and a duplicate is the same bytes under the same webhook-id.
    expect(receiver.received.filter((r) => !r.verdicts.includes('verified')).map((r) => r.verdicts)).toEqual([]);
    for (const r of receiver.received) expect(r.body).toBe(unique().get(r.headers['webhook-id']!));
    // The killed replica's claims were sent again by the others once their lease ended (the receiver may
    // have had them already), and every delivery is settled as delivered.
    const unsettled = () =>
      query<{ id: string; status: string; attempts: number; last_error: string | null }>(
        "SELECT id, status, attempts, last_error FROM webhook_deliveries WHERE status <> 'delivered'",
      );
    try {
      await until(
        'every delivery is recorded as delivered',
        async () => (await unsettled()).length === 0,
        ALL_RECEIVED_WITHIN_MS - waited,
      );
    } catch (error) {
      expect(await unsettled()).toEqual([]);
      throw error;
    }
    const settledAfter = Date.now() - started;
    expect(Number((await query<{ n: string }>('SELECT count(*) AS n FROM webhook_deliveries'))[0]!.n)).toBe(
      committed.length,
    );
    const resent = await query<{ id: string; attempts: number }>(
      'SELECT id, attempts FROM webhook_deliveries WHERE id = ANY($1)',
      [held.map((h) => h.id)],
    );
    expect(resent.map((d) => d.id).sort()).toEqual(held.map((h) => h.id).sort());

    reportFigures('postgres replicas webhooks', {
      calls: calls.length + refusals.length,
      answered_2xx: calls.filter((c) => c.status >= 200 && c.status < 300).length,
      answered_503: [...calls, ...refusals].filter((c) => c.status === 503).length,
      refused_409: [...calls, ...refusals].filter((c) => c.status === 409).length,
      committed: committed.length,
      committed_unanswered: committed.length - 1 - calls.filter((c) => c.status >= 200 && c.status < 300).length,
      claims_held_by_killed: held.length,
      requests_received: receiver.received.length,
      duplicates: receiver.received.length - unique().size,
      last_received_after_ms: waited,
      all_delivered_after_ms: settledAfter,
    });
  }, 120_000);
});
