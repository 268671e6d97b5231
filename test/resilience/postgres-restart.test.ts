// PostgreSQL goes away under load and comes back, while one gateway process keeps running: every
// request is answered (no hang), answers while the server is away are 503 problems with Retry-After
// (never 500, also for requests in flight when it went), /readyz follows the server down and up, no
// acknowledged lead is lost, and the pool serves again without the gateway being restarted.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_V1_KEY, spawnGateway, type ChildGateway } from '../support/child-gateway.js';
import { clusterOrSkip, freshDatabase, type TestPostgres } from '../support/postgres.js';
import { FULL, reportFigures, scale } from './scale.js';

/** Every request has a client timeout: an answer must come well inside it (the pool's bounds are 5-6 s). */
const CLIENT_TIMEOUT_MS = 15_000;
/** How long the server stays down in the stop-wait-start cycles. */
const OUTAGE_MS = 1_500;
/** Load before each cycle, and after the first success that follows it. */
const STEADY_MS = 700;
/** The most a cycle waits for a success after the server is back; the test fails past it. */
const RECOVERY_LIMIT_MS = 20_000;
/** Requests a client sends at most (a bound on the whole run, whatever the timings). */
const MAX_REQUESTS_PER_CLIENT = 3_000;
/** A pause between a client's requests: enough load to be mid-request when the server goes. */
const CLIENT_PAUSE_MS = 3;
const READY_POLL_MS = 100;
/** One readiness verdict is reused for this long (docs/reliability.md), so a 503 may outlive the outage by it. */
const READY_REUSE_MS = 1_000;
/** Requests held on a lock in each cycle, so they are certainly in flight on the server when it goes. */
const HELD = 3;

let cluster: TestPostgres | null = null;
let url: string;
let gw: ChildGateway;
beforeAll(async () => {
  cluster = await clusterOrSkip({ own: true });
  if (!cluster?.server) return;
  url = await freshDatabase(cluster.url);
  // A pool large enough that every client and every held request has its connection on the server.
  const poolSize = String(2 * (scale.restartClients + HELD));
  gw = await spawnGateway({
    env: { DATABASE_URL: url, DATABASE_POOL_SIZE: poolSize, DEMO_MODE: 'true', RATE_LIMIT_PER_MINUTE: '1000000' },
    capture: true,
  });
}, 60_000);
afterAll(async () => {
  await gw?.stop();
  await cluster?.stop();
});

const now = () => performance.now();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Sent {
  eventId: string;
  start: number;
  end: number;
  /** 0: no answer (a network error, or the client timeout). */
  status: number;
  retryAfter: string | null;
  contentType: string | null;
  body: Record<string, unknown> | null;
  error?: string;
}

const bodyOf = (eventId: string) => ({
  event_id: eventId,
  external_contact_id: `restart:${eventId}`,
  first_name: 'Restart',
});

async function send(method: 'POST' | 'GET', path: string, eventId: string): Promise<Sent> {
  const start = now();
  try {
    const res = await fetch(`${gw.address}${path}`, {
      method,
      headers: method === 'POST' ? { authorization: `Bearer ${DEMO_V1_KEY}`, 'content-type': 'application/json' } : {},
      body: method === 'POST' ? JSON.stringify(bodyOf(eventId)) : undefined,
      signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
    });
    const text = await res.text();
    return {
      eventId,
      start,
      end: now(),
      status: res.status,
      retryAfter: res.headers.get('retry-after'),
      contentType: res.headers.get('content-type'),
      body: text ? JSON.parse(text) : null,
    };
  } catch (error) {
    return {
      eventId,
      start,
      end: now(),
      status: 0,
      retryAfter: null,
      contentType: null,
      body: null,
      error: String(error),
    };
  }
}

const postLead = (eventId: string) => send('POST', '/api/integrations/v1/leads/', eventId);

/** What is wrong with a refusal during the outage, or null when it is the documented 503. */
function badRefusal(r: Sent): string | null {
  const ok =
    r.status === 503 &&
    r.retryAfter !== null &&
    /^\d+$/.test(r.retryAfter) &&
    r.contentType?.startsWith('application/problem+json') &&
    r.body?.type === 'urn:lead-gateway:problem:service-unavailable' &&
    r.body?.status === 503 &&
    r.body?.code === 'service-unavailable' &&
    typeof r.body?.detail === 'string' &&
    typeof r.body?.request_id === 'string';
  return ok
    ? null
    : `${r.eventId}: ${r.status} retry-after=${r.retryAfter} ${r.contentType} ${JSON.stringify(r.body)} ${r.error ?? ''}`;
}

/** Waits until `n` of the gateway's statements wait for a lock (so they are in flight on the server). */
async function gatewayWaitingOnLocks(db: pg.Client, n: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    // Inside a transaction the statistics are a snapshot kept until its end: take a new one each time.
    await db.query('SELECT pg_stat_clear_snapshot()');
    const { rows } = await db.query(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'lead-gateway' AND wait_event_type = 'Lock'",
    );
    if (rows[0].n >= n) return;
    await sleep(20);
  }
  throw new Error(`fewer than ${n} gateway statements waited on the lock`);
}

describe('a PostgreSQL restart under load', () => {
  it('is answered with 503 + Retry-After while the server is away, loses no acknowledged lead, and the pool recovers by itself', async (context) => {
    if (!cluster?.server) return context.skip();
    const server = cluster.server;
    const sent: Sent[] = [];
    const ready: Sent[] = [];
    let stopped = false;
    let seq = 0;

    const client = async (c: number) => {
      for (let i = 0; i < MAX_REQUESTS_PER_CLIENT && !stopped; i++) {
        sent.push(await postLead(`r${c}-${seq++}`));
        await sleep(CLIENT_PAUSE_MS);
      }
    };
    const readyPoller = async () => {
      while (!stopped) {
        ready.push(await send('GET', '/readyz', `readyz-${ready.length}`));
        await sleep(READY_POLL_MS);
      }
    };
    /** Resolves at the first 201 of a request started after `since`; throws past the limit. */
    const firstSuccessAfter = async (since: number): Promise<number> => {
      for (;;) {
        const ok = sent.find((r) => r.start >= since && r.status === 201);
        if (ok) return ok.end;
        if (now() - since > RECOVERY_LIMIT_MS)
          throw new Error(`no success within ${RECOVERY_LIMIT_MS} ms of the server's return`);
        await sleep(20);
      }
    };

    const running = [...Array.from({ length: scale.restartClients }, (_, c) => client(c)), readyPoller()];
    const cycles: {
      kind: string;
      downStart: number;
      downDone: number;
      upStart: number;
      upDone: number;
      recovered: number;
      readyAgain?: number;
    }[] = [];
    const inFlight: Sent[] = [];
    try {
      for (let cycle = 0; cycle < scale.restartCycles; cycle++) {
        await sleep(STEADY_MS);
        const kind = cycle % 2 === 0 ? 'stop, wait, start' : 'pg_ctl restart';
        // Requests certainly in flight when the server goes: they wait on a lock this test holds (and
        // so, soon, does every client's request).
        const locker = new pg.Client({ connectionString: url });
        locker.on('error', () => {}); // its connection is terminated by the shutdown too
        await locker.connect();
        await locker.query('BEGIN');
        await locker.query('LOCK TABLE leads IN ACCESS EXCLUSIVE MODE');
        const held = Array.from({ length: HELD }, (_, k) => postLead(`inflight-${cycle}-${k}`));
        await gatewayWaitingOnLocks(locker, HELD + scale.restartClients);
        const downStart = now();
        let downDone: number;
        let upStart: number;
        if (kind === 'pg_ctl restart') {
          await server.restart();
          downDone = upStart = downStart;
        } else {
          await server.down();
          downDone = now();
          await sleep(OUTAGE_MS);
          upStart = now();
          await server.up();
        }
        const upDone = now();
        inFlight.push(...(await Promise.all(held)));
        await locker.end().catch(() => {});
        const recovered = await firstSuccessAfter(upDone);
        cycles.push({ kind, downStart, downDone, upStart, upDone, recovered });
      }
      await sleep(STEADY_MS);
      // The last verdict taken while the server was away may still be reused: wait for a poll that
      // started after it expired (bounded by the recovery limit).
      const fresh = (cycles.at(-1)?.recovered ?? now()) + READY_REUSE_MS;
      while (!ready.some((r) => r.start > fresh) && now() - fresh < RECOVERY_LIMIT_MS) await sleep(READY_POLL_MS);
    } finally {
      stopped = true;
      await Promise.all(running);
    }

    // Every request was answered, each with 201 or the documented 503.
    const unanswered = sent.filter((r) => r.status === 0);
    const refusals = sent.filter((r) => r.status !== 201);
    expect(unanswered.map((r) => `${r.eventId}: ${r.error}`)).toEqual([]);
    expect(refusals.map(badRefusal).filter((x) => x !== null)).toEqual([]);
    // The requests in flight when the server went answered 503 (a terminated backend is no 500), or
    // 201 when their COMMIT won the race with the shutdown (fast shutdown ends the lock's holder and
    // its waiters at once): such a lead must then be stored, which the ledger check below includes.
    expect(
      inFlight
        .filter((r) => r.status !== 201)
        .map(badRefusal)
        .filter((x) => x !== null),
    ).toEqual([]);
    // /readyz: 503 problems while the server was away, 200 once it was back.
    expect(
      ready
        .filter((r) => r.status !== 200)
        .map(badRefusal)
        .filter((x) => x !== null),
    ).toEqual([]);
    for (const c of cycles.filter((c) => c.kind === 'stop, wait, start')) {
      expect(ready.some((r) => r.start >= c.downDone && r.end <= c.upStart && r.status === 503)).toBe(true);
      c.readyAgain = ready.find((r) => r.start >= c.upDone && r.status === 200)?.end;
      expect(c.readyAgain).toBeDefined();
    }
    expect(ready.at(-1)?.status).toBe(200);

    // After the restarts, the same process takes leads again; every refused event is then accepted on
    // its resend: as new, or as a replay when its COMMIT had reached the server before the answer was lost.
    const toResend = [...refusals, ...inFlight].map((r) => r.eventId);
    const resent: Sent[] = [];
    await Promise.all(
      Array.from({ length: scale.restartClients }, async () => {
        for (let eventId = toResend.pop(); eventId !== undefined; eventId = toResend.pop())
          resent.push(await postLead(eventId));
      }),
    );
    const resentBad = resent.filter((r) => r.status !== 201 && !(r.status === 200 && r.body?.replayed === true));
    expect(resentBad.map((r) => `${r.eventId}: ${r.status} ${JSON.stringify(r.body)} ${r.error ?? ''}`)).toEqual([]);

    // Every acknowledged lead is in the database, under its event, once.
    const acknowledged = new Map(
      [...sent, ...inFlight, ...resent]
        .filter((r) => r.status === 201 || r.status === 200)
        .map((r) => [r.eventId, (r.body!.lead as { id: string }).id]),
    );
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    let stored: Map<string, string>;
    let leads: number;
    try {
      const rows = (await db.query("SELECT event_id, lead_id FROM submissions WHERE endpoint = 'leads'")).rows as {
        event_id: string;
        lead_id: string;
      }[];
      stored = new Map(rows.map((r) => [r.event_id, r.lead_id]));
      leads = Number((await db.query('SELECT count(*) AS n FROM leads')).rows[0].n);
    } finally {
      await db.end();
    }
    const lost = [...acknowledged].filter(([eventId, leadId]) => stored.get(eventId) !== leadId);
    expect(lost).toEqual([]);
    expect(stored.size).toBe(acknowledged.size);
    expect(leads).toBe(acknowledged.size);

    // Each server stop is one outage in the log (two close together may be one), not a line per 503.
    const starts = gw
      .output()
      .split('\n')
      .filter((line) => line.includes('"msg":"store unavailable"')).length;
    expect(starts).toBeGreaterThanOrEqual(1);
    expect(starts).toBeLessThanOrEqual(cycles.length);
    // What the driver threw, as the gateway logged it: the refused requests of each cause, counted in
    // the 'store available again' line that ends each outage.
    const engineCodes = new Map<string, number>();
    for (const line of gw.output().split('\n')) {
      if (!line.includes('"store available again"')) continue;
      for (const cause of (JSON.parse(line) as { causes: { engine_code: string | null; refused: number }[] }).causes) {
        const code = String(cause.engine_code);
        engineCodes.set(code, (engineCodes.get(code) ?? 0) + cause.refused);
      }
    }
    const ms = (x: number) => Math.round(x);
    reportFigures(`postgres restart (${FULL ? 'full' : 'quick'})`, {
      clients: scale.restartClients,
      requests: sent.length,
      created: sent.filter((r) => r.status === 201).length,
      refused_503: refusals.length,
      in_flight_503: inFlight.filter((r) => r.status === 503).length,
      in_flight_201: inFlight.filter((r) => r.status === 201).length,
      resent_created: resent.filter((r) => r.status === 201).length,
      resent_replayed: resent.filter((r) => r.status === 200).length,
      lost: lost.length,
      slowest_answer_ms: ms(Math.max(...sent.map((r) => r.end - r.start), ...inFlight.map((r) => r.end - r.start))),
      engine_codes: [...engineCodes].map(([c, n]) => `${c}:${n}`).join(','),
      readyz_503: ready.filter((r) => r.status === 503).length,
      cycles: cycles
        .map(
          (c) =>
            `[${c.kind}: down ${ms(c.downDone - c.downStart)} ms, up ${ms(c.upDone - c.upStart)} ms, server away ${ms(c.upDone - c.downStart)} ms, ` +
            `503s ${sent.filter((r) => r.status === 503 && r.start >= c.downStart - 50 && r.start <= c.recovered).length}, ` +
            `first 201 ${ms(c.recovered - c.upDone)} ms after up${c.readyAgain === undefined ? '' : `, readyz 200 ${ms(c.readyAgain - c.upDone)} ms after up`}]`,
        )
        .join(' '),
    });
  }, 120_000);
});
