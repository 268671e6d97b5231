// Retention through the real gateway's store: hourly call counts past the retention rolled up with the
// migration report, the readiness verdict and the console's chart unchanged; old unmapped and invalid
// answers, ignored legacy member names not sent for as long as the counts are kept, and ended console
// sessions deleted.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Writable } from 'node:stream';
import pino from 'pino';
import { startGateway, type Gateway } from '../helper.js';
import { runRetention, startRetention } from '../../src/retention/retention.js';
import { migrationReport } from '../../src/migration/report.js';
import { createUsageRecorder } from '../../src/migration/usage.js';
import type { UsageIncrement } from '../../src/store/repos/states.js';
import { SESSION_IDLE_MS, SESSION_MAX_MS } from '../../src/console/session-store.js';
import { RETENTION_USAGE_MIN_DAYS } from '../../src/config.js';

let gw: Gateway;
const HANDLE = 'brightpath:telegram-bot';
const DAY = 86_400_000;
const NOW = new Date('2026-11-26T12:30:00.000Z');
const sessions = { idleMs: SESSION_IDLE_MS, maxMs: SESSION_MAX_MS };
const settings = { usageDays: RETENTION_USAGE_MIN_DAYS, answersDays: 7 };

beforeAll(async () => (gw = await startGateway()));
afterAll(() => gw.close());

const ago = (ms: number) => new Date(NOW.getTime() - ms).toISOString();
const calls = (
  integrationId: string,
  iface: 'v1' | 'legacy',
  route: string,
  at: string,
  n: number,
  ok: number,
): UsageIncrement => ({
  integrationId,
  interface: iface,
  route,
  hour: at.slice(0, 13),
  calls: n,
  lastSeen: at,
  okCalls: ok,
  lastOk: ok > 0 ? at : null,
});

describe('hourly call counts past the retention', () => {
  it('are rolled up: the migration report, its readiness and the chart are byte for byte what they were', async () => {
    const integration = gw.rules.current().findIntegration(HANDLE)!;
    const id = integration.id;
    await gw.store.transact((tx) =>
      tx.states.addUsage([
        // Only old calls on this route: its last call and last success come from hours rolled up.
        calls(id, 'legacy', 'POST /api/bots/api/leads/', ago(45 * DAY), 7, 5),
        calls(id, 'legacy', 'POST /api/bots/api/leads/', ago(40 * DAY), 3, 0),
        calls(id, 'v1', 'POST /api/integrations/v1/leads/', ago(31 * DAY), 4, 4),
        calls(id, 'v1', 'POST /api/integrations/v1/leads/', ago(20 * DAY), 2, 1),
        calls(id, 'v1', 'POST /api/integrations/v1/leads/', ago(2 * 3_600_000), 6, 6),
        calls(id, 'legacy', 'GET /api/bots/api/boards/', ago(3 * DAY), 1, 1),
      ]),
    );
    const usage = createUsageRecorder(gw.store);
    const deps = { store: gw.store, usage, now: () => NOW };
    const chart = () =>
      gw.store.snapshot((r) => r.states.usagePerHour(id, ago(RETENTION_USAGE_MIN_DAYS * DAY).slice(0, 13)));
    const lastLegacy = () => gw.store.snapshot((r) => r.states.lastSeen(id, 'legacy'));
    const before = {
      report: JSON.stringify(await migrationReport(deps, integration)),
      chart: await chart(),
      lastLegacy: await lastLegacy(),
    };
    const rowsBefore = (await gw.inspect.dump('api_usage')).length;

    const run = await runRetention(gw.store, settings, sessions, NOW);
    expect(run).toMatchObject({ ran: true, usage_hours_rolled_up: 3 });
    // Three hourly rows became two rolled-up rows (one per route).
    expect((await gw.inspect.dump('api_usage')).length).toBe(rowsBefore - 1);
    expect(JSON.stringify(await migrationReport(deps, integration))).toBe(before.report);
    expect(await chart()).toEqual(before.chart);
    expect(await lastLegacy()).toBe(before.lastLegacy);
    expect(JSON.parse(before.report).legacy.routes).toContainEqual(
      expect.objectContaining({
        route: 'POST /api/bots/api/leads/',
        last_seen: ago(40 * DAY),
        last_success: ago(45 * DAY),
      }),
    );

    // A second run finds nothing more to roll up, and a later hour rolled into the same rows adds up.
    expect((await runRetention(gw.store, settings, sessions, NOW)).usage_hours_rolled_up).toBe(0);
    const later = new Date(NOW.getTime() + 12 * DAY);
    const laterReport = JSON.stringify(await migrationReport({ ...deps, now: () => later }, integration));
    expect((await runRetention(gw.store, settings, sessions, later)).usage_hours_rolled_up).toBe(1);
    expect(JSON.stringify(await migrationReport({ ...deps, now: () => later }, integration))).toBe(laterReport);
    await usage.close();
  });

  it('at most a batch of rows a run, the oldest hours first', async () => {
    const id = 'retention-batch-integration';
    await gw.store.transact((tx) =>
      tx.states.addUsage([1, 2, 3].map((d) => calls(id, 'v1', 'POST /x', ago((100 + d) * DAY), 1, 1))),
    );
    const first = await runRetention(gw.store, settings, sessions, NOW, 2);
    expect(first.usage_hours_rolled_up).toBe(2);
    expect(await gw.store.snapshot((r) => r.states.lastSeen(id, 'v1'))).toBe(ago(101 * DAY));
    expect((await runRetention(gw.store, settings, sessions, NOW, 2)).usage_hours_rolled_up).toBe(1);
    expect(await gw.store.snapshot((r) => r.states.usageSince(id, '0000'))).toEqual([
      { route: 'POST /x', interface: 'v1', calls: 3, lastSeen: ago(101 * DAY), okCalls: 3, lastOk: ago(101 * DAY) },
    ]);
  });
});

describe('unmapped and invalid answers past the retention', () => {
  it('are deleted with their counts; written answers stay', async () => {
    const key = await gw.issueKey(HANDLE);
    const id = gw.rules.current().findIntegration(HANDLE)!.id;
    expect(
      (
        await gw.submit(key, {
          event_id: 'r-lead',
          external_contact_id: 'telegram:9',
          first_name: 'Old',
          phone: '+998901231111',
        })
      ).statusCode,
    ).toBe(201);
    const answer = (eventId: string) =>
      gw.app.inject({
        method: 'POST',
        url: '/api/integrations/v1/leads/answers/',
        headers: { authorization: `Bearer ${key}` },
        payload: {
          event_id: eventId,
          external_contact_id: 'telegram:9',
          answers: { old_key: 'x', '': 'y', course: 'python' },
        },
      });
    expect((await answer('r-1')).statusCode).toBe(200);
    expect(await gw.inspect.answers.count({ key: { in: ['old_key', ''] } })).toBe(2);

    // Not yet past the retention: nothing deleted.
    expect((await runRetention(gw.store, settings, sessions, new Date(Date.now() + 6 * DAY))).answers_deleted).toBe(0);
    const run = await runRetention(gw.store, settings, sessions, new Date(Date.now() + 8 * DAY));
    expect(run.answers_deleted).toBeGreaterThanOrEqual(2);
    expect(await gw.inspect.answers.count({ key: { in: ['old_key', ''] } })).toBe(0);
    expect(await gw.inspect.answers.count({ key: 'course' })).toBe(1);
    const kept = await gw.store.snapshot((r) => r.answers.kept(id, ['old_key', '']));
    expect(kept.perKey.size).toBe(0);
  });
});

describe('ignored legacy member names', () => {
  it('finding 3: a name not sent for RETENTION_USAGE_DAYS is deleted, the oldest first, a batch a run; a name sent since stays', async () => {
    const id = 'retention-ignored-integration';
    await gw.store.transact(async (tx) => {
      await tx.states.countIgnored(id, ['aziza_rahimova'], ago(50 * DAY), 1_000);
      await tx.states.countIgnored(id, ['jasur_k'], ago(40 * DAY), 1_000);
      await tx.states.countIgnored(id, ['+998901234567'], ago(35 * DAY), 1_000);
      await tx.states.countIgnored(id, ['stage'], ago(45 * DAY), 1_000);
      // Sent again within the retention: its last_seen moves, and it stays.
      await tx.states.countIgnored(id, ['stage'], ago(2 * DAY), 1_000);
    });
    const names = () => gw.store.snapshot(async (r) => (await r.states.ignoredFields(id)).map((f) => f.field));
    const first = await runRetention(gw.store, settings, sessions, NOW, 2);
    expect(first.ignored_fields_deleted).toBe(2);
    expect(await names()).toEqual(['+998901234567', 'stage']);
    expect((await runRetention(gw.store, settings, sessions, NOW, 2)).ignored_fields_deleted).toBe(1);
    expect(await gw.store.snapshot((r) => r.states.ignoredFields(id))).toEqual([
      { field: 'stage', calls: 2, lastSeen: ago(2 * DAY) },
    ]);
  });
});

describe('console sessions', () => {
  it('that are over (idle or open too long) are deleted; a live one stays', async () => {
    const now = Date.now();
    const session = (idHash: string, createdAt: number, lastSeenAt: number) => ({
      idHash,
      userName: 'ops',
      credentialId: null,
      createdAt: new Date(createdAt).toISOString(),
      lastSeenAt: new Date(lastSeenAt).toISOString(),
    });
    await gw.store.transact(async (tx) => {
      await tx.consoleSessions.insert(session('idle', now - 2 * 3_600_000, now - SESSION_IDLE_MS - 60_000));
      await tx.consoleSessions.insert(session('too-long', now - SESSION_MAX_MS - 60_000, now - 1_000));
      await tx.consoleSessions.insert(session('live', now - 3_600_000, now - 1_000));
    });
    const run = await runRetention(gw.store, settings, sessions, new Date(now));
    expect(run.sessions_deleted).toBe(2);
    const found = await gw.store.snapshot(async (r) => [
      await r.consoleSessions.find('idle'),
      await r.consoleSessions.find('too-long'),
      await r.consoleSessions.find('live'),
    ]);
    expect(found.map((s) => s?.idHash ?? null)).toEqual([null, null, 'live']);
  });
});

describe('the job', () => {
  it('runs every interval in the process, logs one info line with its counts, and stops', async () => {
    const lines: Record<string, unknown>[] = [];
    const log = pino(
      { level: 'info' },
      new Writable({
        write: (chunk: Buffer, _enc, done) => (
          lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>),
          done()
        ),
      }),
    );
    const now = Date.now();
    await gw.store.transact((tx) =>
      tx.consoleSessions.insert({
        idHash: 'job-idle',
        userName: 'ops',
        credentialId: null,
        createdAt: new Date(now - 3_600_000).toISOString(),
        lastSeenAt: new Date(now - SESSION_IDLE_MS - 60_000).toISOString(),
      }),
    );
    const job = startRetention(gw.store, settings, sessions, log, 20);
    await vi.waitFor(
      async () => expect(await gw.store.snapshot((r) => r.consoleSessions.find('job-idle'))).toBeNull(),
      { timeout: 5_000 },
    );
    await job.stop();
    expect(lines[0]).toMatchObject({ level: 30, msg: 'retention ran', retention: { ran: true, sessions_deleted: 1 } });
  });
});

describe('calls refused in brownout windows', () => {
  it('go with their window once it started RETENTION_USAGE_DAYS ago, as the hourly counts they stand beside', async () => {
    const id = 'retention-brownout-integration';
    const row = (start: string) => ({ integrationId: id, windowStart: start, route: 'GET r', calls: 2, lastAt: start });
    await gw.store.transact((tx) =>
      tx.states.countBrownoutRefusals([row(ago(40 * DAY)), row(ago(31 * DAY)), row(ago(5 * DAY))], 1_000),
    );
    const starts = () =>
      gw.store.snapshot(async (r) => (await r.states.brownoutRefusals(id, 100)).map((b) => b.windowStart));
    const run = await runRetention(gw.store, settings, sessions, NOW);
    expect(run.brownout_refusals_deleted).toBe(2);
    expect(await starts()).toEqual([ago(5 * DAY)]);
  });
});
