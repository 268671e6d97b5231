// Thousands of slow and idle connections held open against a child gateway while a normal client
// submits leads: the normal client gets every answer, and the slow ones are cut off afterwards,
// each with a warn line. Latencies are reported, never asserted.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEMO_V1_KEY, spawnGateway, type ChildGateway } from '../support/child-gateway.js';
import { openRaw, parseResponse, type RawConnection } from '../support/raw-http.js';
import { FULL, reportFigures } from './scale.js';

/** Slow connections held at once (a third each: idle, trickling headers, trickling a body with a key). */
const SLOW = FULL ? 2_400 : 300;
/** Leads the normal client submits, a few at a time, spread over a few seconds while they are held. */
const NORMAL_REQUESTS = FULL ? 400 : 100;
const NORMAL_CONCURRENCY = 4;
const NORMAL_SPREAD_MS = FULL ? 5_000 : 2_000;
/** Long enough that every slow connection is still held while the normal client runs. */
const TIMEOUT_MS = FULL ? 15_000 : 6_000;
/** Each slow client writes one byte (or one header line) this often. */
const TRICKLE_EVERY_MS = 1_000;

const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-slow-'));
let gw: ChildGateway | undefined;
afterAll(async () => {
  await gw?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The soft limit on open files (Linux): this process holds every slow client's socket. */
function openFilesLimit(): number {
  const line = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1];
  return line === undefined || line === 'unlimited' ? Infinity : Number(line);
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;

/** Submits `count` new leads, one starting every spread/count ms, at most `NORMAL_CONCURRENCY` at a time. */
async function normalClient(
  address: string,
  prefix: string,
  count: number,
  spreadMs = NORMAL_SPREAD_MS,
): Promise<{ statuses: number[]; latencies: number[] }> {
  const statuses: number[] = [];
  const latencies: number[] = [];
  const began = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const due = began + (i * spreadMs) / count;
      if (due > performance.now()) await new Promise((resolve) => setTimeout(resolve, due - performance.now()));
      const started = performance.now();
      const res = await fetch(`${address}/api/integrations/v1/leads/`, {
        method: 'POST',
        headers: { authorization: `Bearer ${DEMO_V1_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          event_id: `${prefix}-${i}`,
          external_contact_id: `${prefix}:${i}`,
          first_name: 'Normal',
        }),
      });
      await res.arrayBuffer();
      latencies.push(performance.now() - started);
      statuses.push(res.status);
    }
  };
  await Promise.all(Array.from({ length: NORMAL_CONCURRENCY }, worker));
  return { statuses, latencies: latencies.sort((a, b) => a - b) };
}

type Kind = 'idle' | 'headers' | 'body';
const KINDS: Kind[] = ['idle', 'headers', 'body'];
/** The warn line each kind of slow client must leave. */
const REASON: Record<Kind, string> = { idle: 'idle', headers: 'headers-timeout', body: 'request-timeout' };

async function openSlow(port: number, kind: Kind, n: number): Promise<RawConnection> {
  const deadline = TIMEOUT_MS + 20_000;
  if (kind === 'idle') return openRaw(port, null, deadline);
  if (kind === 'headers') {
    const conn = await openRaw(
      port,
      `POST /api/integrations/v1/leads/ HTTP/1.1\r\nHost: gateway\r\nX-Request-Id: slow-headers-${n}\r\n`,
      deadline,
    );
    conn.trickle('X-Slow: 1\r\n', TRICKLE_EVERY_MS);
    return conn;
  }
  const conn = await openRaw(
    port,
    `POST /api/integrations/v1/leads/ HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${DEMO_V1_KEY}\r\nX-Request-Id: slow-body-${n}\r\n` +
      'Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"event_id":"',
    deadline,
  );
  conn.trickle('a', TRICKLE_EVERY_MS);
  return conn;
}

describe('slow clients', () => {
  it(`${SLOW} slow connections held while a normal client submits ${NORMAL_REQUESTS} leads: every answer 2xx, every slow one cut off and logged`, async () => {
    expect(openFilesLimit(), `raise ulimit -n above ${SLOW + 500} to hold ${SLOW} connections`).toBeGreaterThan(
      SLOW + 500,
    );
    gw = await spawnGateway({
      env: {
        DATABASE_PATH: join(dir, 'g.db'),
        DEMO_MODE: 'true',
        RATE_LIMIT_PER_MINUTE: '1000000',
        HEADERS_TIMEOUT_MS: String(TIMEOUT_MS),
        REQUEST_TIMEOUT_MS: String(TIMEOUT_MS),
        MAX_CONNECTIONS: String(SLOW + 100),
      },
      capture: true,
    });
    const port = Number(new URL(gw.address).port);

    // The same client alone first, for comparison, after a few requests that warm the process up.
    await normalClient(gw.address, 'warm-up', 50, 0);
    const alone = await normalClient(gw.address, 'alone', NORMAL_REQUESTS);

    // Opened in batches, so the listen backlog does not overflow and turn connects into SYN retries.
    const openingStarted = performance.now();
    const slow: { kind: Kind; conn: RawConnection }[] = [];
    for (let batch = 0; batch < SLOW; batch += 200) {
      const opened = await Promise.all(
        Array.from({ length: Math.min(200, SLOW - batch) }, (_, j) => {
          const n = batch + j;
          const kind = KINDS[n % 3]!;
          return openSlow(port, kind, n).then((conn) => ({ kind, conn }));
        }),
      );
      slow.push(...opened);
    }
    const openedMs = performance.now() - openingStarted;
    let closedEarly = 0;
    for (const { conn } of slow) void conn.closed.then(() => closedEarly++);

    const loaded = await normalClient(gw.address, 'loaded', NORMAL_REQUESTS);
    const heldThrough = SLOW - closedEarly;
    const measuredMs = performance.now() - openingStarted;

    // Every slow connection is closed by the server, not by the test's deadline.
    const ends = await Promise.all(slow.map(async ({ kind, conn }) => ({ kind, ...(await conn.closed) })));
    const cutOffMs = ends.map((e) => e.afterMs).sort((a, b) => a - b);
    const answered408 = ends.filter((e) => parseResponse(e.raw)?.status === 408).length;
    const refusalLines = () =>
      gw!
        .output()
        .split('\n')
        .filter((line) => line.includes('"msg":"client refused"'))
        .map((line) => JSON.parse(line) as { reason: string; remote_address: string; level: number });
    // The child's lines reach the pipe a little after the sockets close.
    await expect.poll(() => refusalLines().length, { timeout: 10_000, interval: 100 }).toBeGreaterThanOrEqual(SLOW);
    const refusals = refusalLines();

    reportFigures('slow clients', {
      slow_connections: SLOW,
      opened_in_ms: Math.round(openedMs),
      held_through_measurement: heldThrough,
      measurement_ms: Math.round(measuredMs),
      normal_requests: NORMAL_REQUESTS,
      normal_2xx: loaded.statuses.filter((s) => s >= 200 && s < 300).length,
      alone_p50_ms: percentile(alone.latencies, 50).toFixed(1),
      alone_p99_ms: percentile(alone.latencies, 99).toFixed(1),
      loaded_p50_ms: percentile(loaded.latencies, 50).toFixed(1),
      loaded_p99_ms: percentile(loaded.latencies, 99).toFixed(1),
      timeout_ms: TIMEOUT_MS,
      cut_off_min_ms: Math.round(cutOffMs[0]!),
      cut_off_max_ms: Math.round(cutOffMs.at(-1)!),
      answered_408: answered408,
      refusal_lines: refusals.length,
    });

    expect(alone.statuses.every((s) => s === 201)).toBe(true);
    expect(loaded.statuses.filter((s) => s !== 201)).toEqual([]);
    expect(loaded.statuses).toHaveLength(NORMAL_REQUESTS);
    expect(ends.filter((e) => !e.byServer)).toEqual([]);
    for (const kind of KINDS) {
      const count = slow.filter((s) => s.kind === kind).length;
      expect(
        refusals.filter((r) => r.reason === REASON[kind] && r.level === 40 && r.remote_address === '127.0.0.1'),
        kind,
      ).toHaveLength(count);
    }
  }, 180_000);
});
