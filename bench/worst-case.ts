// One integration sending worst-case bodies at its whole allowance, while another client polls
// /healthz: the gateway's CPU as a share of a core, and /healthz p50/p99. `npm run build`, then
// `npx tsx bench/worst-case.ts [--seconds 10] [--main other-build/dist/main.js] [--free-bytes N] [--idle]`;
// `--idle` sends nothing: /healthz on the machine as it is, the reference for the p99 under load.
//
// The allowance of one integration at the default quota (600 a minute) is 10 requests a second
// charged to it, and FREE_OUTCOMES_FACTOR times that a second of free outcomes (replays and 409s). Charged: bodies of just under 1 MiB holding ~90,000 keys where each route counts them
// (v1 `answers`, legacy `extra_data`), refused. Free: the largest valid bodies of each route, sent again
// (replays) or sent again with one answer changed (409s). The four routes take turns.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CHILD_ADMIN_TOKEN, postJson, spawnGateway } from '../test/support/child-gateway.js';
import { BENCH_INTEGRATION } from './templates.js';
import { FREE_OUTCOMES_FACTOR } from '../src/rate-limit/quota.js';

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    main: { type: 'string' },
    'free-bytes': { type: 'string' },
    label: { type: 'string', default: 'this build' },
    idle: { type: 'boolean', default: false },
  },
});
const SECONDS = Number(args.seconds);
const CHARGED_PER_S = 10;
const FREE_PER_S = CHARGED_PER_S * FREE_OUTCOMES_FACTOR;
const LEGACY_KEY = 'bench-worst-case-legacy-key-0001';
const CLOCK_TICKS = 100;

const cpuTicks = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(fields[11]) + Number(fields[12]);
};

/** ~`bytes` of JSON text as `count` members, each a key of `keyChars` and a value filling the rest. */
const members = (prefix: string, count: number, keyChars: number, valueChars: number) =>
  Object.fromEntries(
    Array.from({ length: count }, (_, i) => [`${prefix}${i}`.padEnd(keyChars, 'k'), 'v'.repeat(valueChars)]),
  );
/** Just under 1 MiB: 90,000 short keys. */
const manyKeys = () => Object.fromEntries(Array.from({ length: 90_000 }, (_, i) => [`k${i}`, 0]));

/** The largest valid bodies, scaled down when `--free-bytes` asks for less (or up to it, in answer values). */
function freeBodies(scale: number) {
  const value = Math.max(1, Math.round(230 * scale));
  const metadata = Object.fromEntries(Array.from({ length: 1_200 }, (_, i) => [`m${i}`, i]));
  return {
    lead: {
      event_id: 'wc-lead',
      external_contact_id: 'telegram:wc-1',
      first_name: 'Worst',
      phone: '+998901239999',
      notes: 'n'.repeat(10_000),
      metadata,
      answers: members('a', 200, 250, value),
    },
    answers: { event_id: 'wc-answers', external_contact_id: 'telegram:wc-1', answers: members('b', 200, 250, value) },
    legacyCreate: {
      first_name: 'Worst',
      phone: '+998901238888',
      notes: 'n'.repeat(10_000),
      tag_ids: Array.from({ length: 200 }, (_, i) => `tag-${i}`.padEnd(100, 't')),
      extra_data: members('d', 200, 40, 30),
    },
    legacyUpdate: {
      tag_ids: Array.from({ length: 200 }, (_, i) => `tag-${i}`.padEnd(100, 't')),
      extra_data: members('e', 200, 250, value),
    },
  };
}

interface Sent {
  route: string;
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-worst-case-'));
  const gw = await spawnGateway({
    entry: 'dist',
    ...(args.main ? { main: args.main } : {}),
    env: { DATABASE_PATH: join(dir, 'gateway.db') },
  });
  try {
    const admin = { authorization: `Bearer ${CHILD_ADMIN_TOKEN}` };
    const issued = await postJson(`${gw.address}/admin/v1/integrations/${BENCH_INTEGRATION}/keys`, admin, {});
    await postJson(`${gw.address}/admin/v1/integrations/${BENCH_INTEGRATION}/keys/import`, admin, { key: LEGACY_KEY });
    const v1 = { authorization: `Bearer ${issued.body.key as string}` };
    const legacy = { 'x-bot-api-key': LEGACY_KEY };
    const bodies = freeBodies(args['free-bytes'] ? Number(args['free-bytes']) / 130_000 : 1);

    // The first sends, stored: what the free requests then replay or contradict.
    const lead = await postJson(`${gw.address}/api/integrations/v1/leads/`, v1, bodies.lead);
    const answers = await postJson(`${gw.address}/api/integrations/v1/leads/answers/`, v1, bodies.answers);
    const created = await postJson(
      `${gw.address}/api/bots/api/leads/`,
      { ...legacy, 'idempotency-key': 'wc-create' },
      bodies.legacyCreate,
    );
    const leadId = created.body.id as string;
    const updated = await fetch(`${gw.address}/api/bots/api/leads/${leadId}/`, {
      method: 'PATCH',
      headers: { ...legacy, 'idempotency-key': 'wc-update', 'content-type': 'application/json' },
      body: JSON.stringify(bodies.legacyUpdate),
    });
    console.log(
      `stored first: lead ${lead.status}, answers ${answers.status}, legacy create ${created.status}, legacy update ${updated.status}`,
    );

    const contradicted = {
      ...bodies.answers,
      answers: { ...bodies.answers.answers, [Object.keys(bodies.answers.answers)[0]!]: 'changed' },
    };
    const free: Sent[] = [
      {
        route: 'v1 leads (replay)',
        url: '/api/integrations/v1/leads/',
        method: 'POST',
        headers: v1,
        body: JSON.stringify(bodies.lead),
      },
      {
        route: 'v1 answers (409)',
        url: '/api/integrations/v1/leads/answers/',
        method: 'POST',
        headers: v1,
        body: JSON.stringify(contradicted),
      },
      {
        route: 'legacy POST (replay)',
        url: '/api/bots/api/leads/',
        method: 'POST',
        headers: { ...legacy, 'idempotency-key': 'wc-create' },
        body: JSON.stringify(bodies.legacyCreate),
      },
      {
        route: 'legacy PATCH (replay)',
        url: `/api/bots/api/leads/${leadId}/`,
        method: 'PATCH',
        headers: { ...legacy, 'idempotency-key': 'wc-update' },
        body: JSON.stringify(bodies.legacyUpdate),
      },
    ];
    const huge = manyKeys();
    const charged: Sent[] = [
      {
        route: 'v1 leads (90,000 answers)',
        url: '/api/integrations/v1/leads/',
        method: 'POST',
        headers: v1,
        body: JSON.stringify({ event_id: 'wc-huge', first_name: 'A', answers: huge }),
      },
      {
        route: 'v1 answers (90,000 answers)',
        url: '/api/integrations/v1/leads/answers/',
        method: 'POST',
        headers: v1,
        body: JSON.stringify({ event_id: 'wc-huge', external_contact_id: 'telegram:wc-1', answers: huge }),
      },
      {
        route: 'legacy POST (90,000 extra_data)',
        url: '/api/bots/api/leads/',
        method: 'POST',
        headers: legacy,
        body: JSON.stringify({ first_name: 'A', extra_data: huge }),
      },
      {
        route: 'legacy PATCH (90,000 extra_data)',
        url: `/api/bots/api/leads/${leadId}/`,
        method: 'PATCH',
        headers: legacy,
        body: JSON.stringify({ extra_data: huge }),
      },
    ];
    for (const r of [...free, ...charged]) console.log(`${r.route}: ${r.body.length} bytes`);

    // /healthz from a process of its own, so the sender's work never delays a poll.
    const poller = spawn(process.execPath, ['-e', POLLER, gw.address, String(SECONDS * 1_000)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let polled = '';
    poller.stdout.on('data', (c: Buffer) => (polled += c.toString()));
    const pollerDone = new Promise<void>((resolve) => poller.on('exit', () => resolve()));

    const statuses = new Map<string, number>();
    const inFlight: Promise<void>[] = [];
    const send = (r: Sent) =>
      fetch(`${gw.address}${r.url}`, {
        method: r.method,
        headers: { ...r.headers, 'content-type': 'application/json' },
        body: r.body,
      }).then(
        async (res) => {
          await res.arrayBuffer();
          const k = `${r.route} -> ${res.status}`;
          statuses.set(k, (statuses.get(k) ?? 0) + 1);
        },
        () => void statuses.set(`${r.route} -> network error`, (statuses.get(`${r.route} -> network error`) ?? 0) + 1),
      );
    const ticks0 = cpuTicks(gw.pid);
    const started = performance.now();
    let n = 0;
    const perTick = (CHARGED_PER_S + FREE_PER_S) / 100;
    // Every 10 ms, the requests due by then: one charged in every 11.
    while (performance.now() - started < SECONDS * 1_000) {
      if (args.idle) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        continue;
      }
      const due = Math.floor(((performance.now() - started) / 10) * perTick);
      while (n < due) {
        const r = n % 11 === 0 ? charged[Math.floor(n / 11) % charged.length]! : free[n % free.length]!;
        inFlight.push(send(r));
        n++;
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await Promise.all(inFlight);
    const elapsed = (performance.now() - started) / 1_000;
    const cpu = (cpuTicks(gw.pid) - ticks0) / CLOCK_TICKS;
    await pollerDone;
    const latencies = (JSON.parse(polled) as number[]).sort((a, b) => a - b);
    const pct = (p: number) =>
      latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!.toFixed(1);
    console.log(`\n${args.label}: ${n} requests in ${elapsed.toFixed(1)} s`);
    for (const [k, v] of [...statuses].sort()) console.log(`  ${k}: ${v}`);
    console.log(
      `gateway CPU: ${((cpu / elapsed) * 100).toFixed(1)}% of a core (${(cpu * 1_000).toFixed(0)} ms over ${elapsed.toFixed(1)} s)`,
    );
    console.log(
      `/healthz: ${latencies.length} polls, p50 ${pct(50)} ms, p99 ${pct(99)} ms, max ${latencies.at(-1)!.toFixed(1)} ms`,
    );
    if (args.idle) return;
    // The CPU of each kind of request alone, one at a time: what the allowance costs whatever else
    // the machine runs (the share above also depends on how much of a core the gateway was given).
    console.log('\nCPU per request, each kind alone (50 in a row):');
    let projected = 0;
    for (const [i, r] of [...free, ...charged].entries()) {
      const before = cpuTicks(gw.pid);
      for (let k = 0; k < 50; k++) await send(r);
      const ms = ((cpuTicks(gw.pid) - before) / CLOCK_TICKS / 50) * 1_000;
      const rate = i < free.length ? FREE_PER_S / free.length : CHARGED_PER_S / charged.length;
      projected += (rate * ms) / 1_000;
      console.log(`  ${r.route}: ${ms.toFixed(2)} ms`);
    }
    console.log(
      `at the allowance (${CHARGED_PER_S} charged + ${FREE_PER_S} free a second, the routes in turn): ${(projected * 100).toFixed(1)}% of a core`,
    );
  } finally {
    await gw.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Polls GET /healthz every 20 ms on a kept-alive connection; prints the latencies (ms) as JSON. */
const POLLER = `
const http = require('node:http');
const [address, ms] = process.argv.slice(1);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const out = [];
const end = Date.now() + Number(ms);
function poll() {
  if (Date.now() >= end) { process.stdout.write(JSON.stringify(out)); agent.destroy(); return; }
  const t = performance.now();
  http.get(address + '/healthz', { agent }, (res) => { res.resume(); res.on('end', () => { out.push(performance.now() - t); setTimeout(poll, 20); }); });
}
poll();
`;

await main();
