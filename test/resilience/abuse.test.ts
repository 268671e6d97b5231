// Abuse from one client, against the gateway as a real process over real HTTP: the largest invalid body
// the lead route reads sent in a loop, and a key-guessing loop. Statuses are asserted; CPU and time are only reported.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { DEMO_V1_KEY, spawnGateway, type ChildGateway } from '../support/child-gateway.js';
import { FULL, reportFigures } from './scale.js';
import { LEAD_BODY_LIMIT_BYTES } from '../../src/intake/schemas.js';

const LEADS = '/api/integrations/v1/leads/';
const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-abuse-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** CPU time the process has used so far, in microseconds (/proc, clock ticks of 10 ms). */
function cpuMicros(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/** Sends `count` requests one after another on one kept-alive connection; statuses, CPU and time. */
async function loop(
  gw: ChildGateway,
  count: number,
  request: (i: number) => { headers: Record<string, string>; body: string },
) {
  const client = new Client(gw.address, { pipelining: 1 });
  const statuses = new Map<number, number>();
  const cpuBefore = cpuMicros(gw.pid);
  const started = performance.now();
  try {
    for (let i = 0; i < count; i++) {
      const { headers, body } = request(i);
      const res = await client.request({
        method: 'POST',
        path: LEADS,
        headers: { 'content-type': 'application/json', ...headers },
        body,
      });
      await res.body.dump();
      statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
    }
  } finally {
    await client.close();
  }
  return {
    statuses: Object.fromEntries(statuses),
    cpuMicrosPerRequest: Math.round((cpuMicros(gw.pid) - cpuBefore) / count),
    msPerRequest: Math.round(((performance.now() - started) / count) * 100) / 100,
  };
}

const start = (name: string, env: Record<string, string>) =>
  spawnGateway({ env: { DATABASE_PATH: join(dir, `${name}.db`), DEMO_MODE: 'true', ...env }, capture: true });

describe('the largest invalid body a lead route reads, in a loop', () => {
  it('is parsed and refused with 422 while the quota lasts, and refused with 429 unread once it is used up', async () => {
    const count = FULL ? 300 : 30;
    // Well-formed JSON with a member the schema does not have, just under the route's body limit
    // (a bigger one is a 413 unread) in strings under the scan's limit: parsed in full, then a 422.
    const body = (i: number) =>
      JSON.stringify({
        event_id: `big-${i}`,
        first_name: 'A',
        padding: ['x'.repeat(60_000), 'x'.repeat(60_000), 'x'.repeat(LEAD_BODY_LIMIT_BYTES - 121_000)],
      });
    const auth = { authorization: `Bearer ${DEMO_V1_KEY}` };
    const [open, exhausted] = await Promise.all([
      start('open', { RATE_LIMIT_PER_MINUTE: '1000000' }),
      start('exhausted', { RATE_LIMIT_PER_MINUTE: '1' }),
    ]);
    try {
      await loop(exhausted, 1, (i) => ({ headers: auth, body: body(i) })); // uses the one request of the minute
      const parsed = await loop(open, count, (i) => ({ headers: auth, body: body(i) }));
      const refused = await loop(exhausted, count, (i) => ({ headers: auth, body: body(i) }));
      reportFigures(`${LEAD_BODY_LIMIT_BYTES / 1_024} KiB invalid body (${FULL ? 'full' : 'quick'})`, {
        requests: count,
        parsed_statuses: JSON.stringify(parsed.statuses),
        parsed_cpu_us_per_request: parsed.cpuMicrosPerRequest,
        parsed_ms_per_request: parsed.msPerRequest,
        refused_statuses: JSON.stringify(refused.statuses),
        refused_cpu_us_per_request: refused.cpuMicrosPerRequest,
        refused_ms_per_request: refused.msPerRequest,
      });
      expect(parsed.statuses).toEqual({ 422: count });
      expect(refused.statuses).toEqual({ 429: count });
    } finally {
      await Promise.all([open.stop('SIGKILL'), exhausted.stop('SIGKILL')]);
    }
  }, 120_000);
});

describe('a key-guessing loop', () => {
  it('reaches the key lookup AUTH_FAILURES_PER_MINUTE times; the rest get 429 and one warn line is written', async () => {
    const count = FULL ? 2_000 : 200;
    const gw = await start('guessing', {});
    try {
      const body = JSON.stringify({ event_id: 'guess', first_name: 'A' });
      const guesses = await loop(gw, count, (i) => ({ headers: { authorization: `Bearer lgv1_guess-${i}` }, body }));
      const right = await loop(gw, 1, () => ({ headers: { authorization: `Bearer ${DEMO_V1_KEY}` }, body }));
      const warnings = gw
        .output()
        .split('\n')
        .filter((line) => line.includes('"failed authentications from this address throttled"'));
      reportFigures(`key guessing (${FULL ? 'full' : 'quick'})`, {
        guesses: count,
        reached_lookup: guesses.statuses[401] ?? 0,
        refused_429: guesses.statuses[429] ?? 0,
        cpu_us_per_guess: guesses.cpuMicrosPerRequest,
        ms_per_guess: guesses.msPerRequest,
        warn_lines: warnings.length,
      });
      expect(guesses.statuses).toEqual({ 401: 30, 429: count - 30 });
      // The right key from the same address waits for the window as well (docs/api.md).
      expect(right.statuses).toEqual({ 429: 1 });
      expect(warnings).toHaveLength(1);
      expect(JSON.parse(warnings[0]!)).toMatchObject({
        level: 40,
        client_address: '127.0.0.1',
        interface: 'v1',
        failures: 30,
      });
      expect(gw.output()).not.toContain('lgv1_guess');
    } finally {
      await gw.stop('SIGKILL');
    }
  }, 120_000);
});
