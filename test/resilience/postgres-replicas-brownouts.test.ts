// A brownout window (src/rules/brownouts.ts) on three gateway processes on one PostgreSQL database,
// each reading the window from its rules and its clock: before the start every replica passes the
// legacy key, from the start every replica refuses it with the brownout problem (its end, Retry-After
// until it), v1 and test keys pass throughout, after the end every replica passes it again; the
// refusals of every replica are counted in the report, and the start and the end are told once
// (docs/runbook.md, "2b. Brownouts"). The window lasts its minute: the file runs in
// `npm run test:resilience`, not in `npm test` (docs/testing.md).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildGateway } from '../support/child-gateway.js';
import { clusterOrSkip, freshDatabase, type TestPostgres } from '../support/postgres.js';
import { at, removeBrownoutRules, rulesWith, window } from '../support/brownout-rules.js';
import {
  admin,
  auditOf,
  keyFor,
  legacyCall,
  replicaEnv,
  sleep,
  startReplica,
  startReplicas,
  until,
  v1Lead,
} from '../support/gateway-replicas.js';
import type { MigrationReport } from '../../src/migration/report.js';

const TELEGRAM = 'brightpath:telegram-bot';
const LEGACY_KEY = 'brownout-replicas-key-0123456789abcdef';
/** Under the workspace's list: the window of the second test. */
const WEBSITE = 'brightpath:website-form';
const WEBSITE_KEY = 'brownout-replicas-website-0123456789ab';
/** The window starts this long after the rules that set it are reloaded, and lasts a minute. */
const START_AFTER_MS = 3_000;
const MINUTE_MS = 60_000;
/** How often each replica is called around a window's start and end. */
const PROBE_EVERY_MS = 40;

let cluster: TestPostgres | null = null;
let replicas: ChildGateway[] = [];
let rulesDir = '';
const keys = { v1: '', test: '' };

beforeAll(async () => {
  cluster = await clusterOrSkip();
  if (!cluster) return;
  // The telegram bot's list empty at the start; the test puts its window in and reloads.
  rulesDir = rulesWith({ telegram: '[]', workspace: '[]' });
  const env = replicaEnv(await freshDatabase(cluster.url), rulesDir);
  // One first, so the others find the schema migrated.
  replicas = [await startReplica({ env })];
  replicas.push(...(await startReplicas(2, { env })));
  await keyFor(replicas[0]!, TELEGRAM, 'keys/import', LEGACY_KEY);
  keys.v1 = await keyFor(replicas[1]!, TELEGRAM, 'keys');
  keys.test = await keyFor(replicas[2]!, TELEGRAM, 'keys/test');
  await keyFor(replicas[0]!, WEBSITE, 'keys/import', WEBSITE_KEY);
}, 90_000);
afterAll(async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  removeBrownoutRules();
});

interface Probe {
  replica: number;
  sentAt: number;
  answeredAt: number;
  status: number;
  body: Record<string, unknown>;
  retryAfter: string | null;
}

/**
 * Calls the old interface on every replica, each every PROBE_EVERY_MS, from now until `untilMs`;
 * `afterLast` runs for each replica as soon as its last call is answered.
 */
async function probe(untilMs: number, key = LEGACY_KEY, afterLast?: (replica: number) => void): Promise<Probe[]> {
  const probes: Probe[] = [];
  await Promise.all(
    replicas.map(async (r, replica) => {
      for (;;) {
        const sentAt = Date.now();
        const res = await legacyCall(r, key);
        probes.push({
          replica,
          sentAt,
          answeredAt: Date.now(),
          status: res.status,
          body: res.body,
          retryAfter: res.headers.get('retry-after'),
        });
        if (Date.now() + PROBE_EVERY_MS >= untilMs) break;
        await sleep(PROBE_EVERY_MS);
      }
      afterLast?.(replica);
    }),
  );
  return probes;
}

/** Every key but the legacy one passes on every replica. */
async function othersPass() {
  for (const r of replicas) {
    expect((await v1Lead(r, keys.v1)).status).toBe(201);
    const test = await v1Lead(r, keys.test);
    expect(test.status).toBe(201);
    expect(test.headers.get('lead-gateway-test-mode')).toBe('true');
  }
}

const report = async (handle = TELEGRAM) =>
  (await admin<MigrationReport>(replicas[0]!, 'GET', `/admin/v1/integrations/${handle}/report`)).body;

/** Sets the brownout list (a YAML flow list) of the telegram bot or of the workspace, and reloads. */
async function setWindows(list: 'telegram' | 'workspace', windows: string) {
  const file = join(rulesDir, 'brightpath.yaml');
  const line = new RegExp(`^(${list === 'telegram' ? ' {6}' : ' {4}'}brownouts: ).*$`, 'm');
  writeFileSync(file, readFileSync(file, 'utf8').replace(line, `$1${windows}`));
  const reload = await admin<{ replicas: { outcome: string }[] }>(replicas[0]!, 'POST', '/admin/v1/rules/reload');
  expect(reload.status).toBe(200);
  expect(reload.body.replicas.map((x) => x.outcome)).toEqual(['reloaded', 'reloaded', 'reloaded']);
}

describe('a brownout window on three replicas', () => {
  it('starts and ends on every replica at once, leaves v1 and test keys alone, and counts the refusals of all', async (context) => {
    if (!cluster) return context.skip();
    for (const r of replicas) expect((await legacyCall(r, LEGACY_KEY)).status).toBe(200);

    const startMs = Date.now() + START_AFTER_MS;
    const endMs = startMs + MINUTE_MS;
    await setWindows('telegram', `[${window(startMs, 1)}]`);
    if (Date.now() > startMs - 1_000) throw new Error('the reload took too long to see the window start');

    // Around the start: passed until it, refused from it on, by every replica, read from its own clock.
    const atStart = await probe(startMs + 1_500);
    for (let replica = 0; replica < replicas.length; replica++) {
      const mine = atStart.filter((p) => p.replica === replica);
      expect(mine.filter((p) => p.answeredAt < startMs).map((p) => p.status)).toContain(200);
      expect(mine.filter((p) => p.answeredAt < startMs).every((p) => p.status === 200)).toBe(true);
      const inside = mine.filter((p) => p.sentAt >= startMs);
      expect(inside.length).toBeGreaterThan(0);
      expect(inside.every((p) => p.status === 403)).toBe(true);
      // Refused within a second of the start (the first call sent from it on).
      expect(inside[0]!.sentAt - startMs).toBeLessThan(1_000);
    }
    for (const p of atStart.filter((x) => x.status === 403)) {
      expect(p.body).toMatchObject({
        type: 'urn:lead-gateway:problem:brownout',
        status: 403,
        brownout: { start: at(startMs), end: at(endMs) },
        sunset: '2027-03-01',
      });
      // Retry-After: the seconds from the answer to the window's end, rounded up.
      const retryAfter = Number(p.retryAfter);
      expect(retryAfter).toBeGreaterThanOrEqual(Math.ceil((endMs - p.answeredAt) / 1000));
      expect(retryAfter).toBeLessThanOrEqual(Math.ceil((endMs - p.sentAt) / 1000));
    }
    await othersPass();

    // Around the end: refused until it, passed from it on, by every replica.
    await sleep(endMs - 1_500 - Date.now());
    const atEnd = await probe(endMs + 1_500);
    for (let replica = 0; replica < replicas.length; replica++) {
      const mine = atEnd.filter((p) => p.replica === replica);
      expect(mine.filter((p) => p.answeredAt < endMs).map((p) => p.status)).toContain(403);
      expect(mine.filter((p) => p.answeredAt < endMs).every((p) => p.status === 403)).toBe(true);
      const after = mine.filter((p) => p.sentAt >= endMs);
      expect(after.length).toBeGreaterThan(0);
      expect(after.every((p) => p.status === 200)).toBe(true);
      expect(after[0]!.sentAt - endMs).toBeLessThan(1_000);
    }
    await othersPass();

    // Every refusal of every replica, counted once: in the report, and in the end's audit entry.
    const refused = [...atStart, ...atEnd].filter((p) => p.status === 403);
    await until('the report counts every refusal', async () => {
      const [w] = (await report()).brownouts;
      return w?.refused_calls === refused.length;
    });
    expect((await report()).brownouts).toEqual([
      expect.objectContaining({
        start: at(startMs),
        end: at(endMs),
        status: 'past',
        refused_calls: refused.length,
        routes: [{ route: 'GET /api/bots/api/info/', calls: refused.length }],
      }),
    ]);
    await until('the end is told', async () =>
      (await auditOf(replicas[1]!, TELEGRAM)).some((e) => e.action === 'brownout_ended'),
    );
    const told = (await auditOf(replicas[2]!, TELEGRAM)).filter((e) => e.action.startsWith('brownout_'));
    expect(told.map((e) => [e.action, e.actor])).toEqual([
      ['brownout_ended', 'calendar'],
      ['brownout_started', 'calendar'],
    ]);
    expect(told[0]!.details).toEqual({ start: at(startMs), end: at(endMs), refused_calls: refused.length });
  }, 120_000);

  it('tells the end with the refusals of every replica, one that wrote its counts a second late included', async (context) => {
    if (!cluster) return context.skip();
    // A window that started a minute ago and ends in a few seconds (a start in the past is allowed).
    const endMs = Date.now() + START_AFTER_MS;
    await setWindows('workspace', `[${window(endMs - MINUTE_MS, 1)}]`);
    const slow = replicas[2]!;
    // The third replica cannot write what it refused last until the others have looked past the end.
    let refused: Probe[];
    try {
      refused = (
        await probe(endMs - 100, WEBSITE_KEY, (replica) => {
          if (replica === 2) slow.child.kill('SIGSTOP');
        })
      ).filter((p) => p.status === 403);
      await sleep(endMs + 1_200 - Date.now());
    } finally {
      slow.child.kill('SIGCONT');
    }
    expect(new Set(refused.map((p) => p.replica))).toEqual(new Set([0, 1, 2]));
    await until('the end is told', async () =>
      (await auditOf(replicas[0]!, WEBSITE)).some((e) => e.action === 'brownout_ended'),
    );
    const ended = (await auditOf(replicas[1]!, WEBSITE)).filter((e) => e.action === 'brownout_ended');
    expect(ended.map((e) => e.details)).toEqual([
      { start: at(endMs - MINUTE_MS), end: at(endMs), refused_calls: refused.length },
    ]);
    expect((await report(WEBSITE)).brownouts[0]?.refused_calls).toBe(refused.length);
  }, 60_000);
});
