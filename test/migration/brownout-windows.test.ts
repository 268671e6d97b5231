// Brownout windows set through the admin API (src/migration/brownout-windows.ts): added, listed beside
// the rules' own, cancelled, each change audited; bad input is a problem and stores nothing; the gate
// refuses inside a stored window as inside one of the rules, the report counts it and the calendar
// tells it; a switch-off and a rollback cancel them; a window added on one gateway refuses on another.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../helper.js';
import { onEachEngineTwice } from '../support/twin-gateways.js';
import { at, removeBrownoutRules, rulesWith, window } from '../support/brownout-rules.js';
import { BROWNOUT_MINUTES_MAX, BROWNOUTS_PER_INTEGRATION_MAX } from '../../src/rules/brownouts.js';
import type { BrownoutEntry, BrownoutPage } from '../../src/migration/brownout-windows.js';
import type { MigrationReport } from '../../src/migration/report.js';
import { runRetention } from '../../src/retention/retention.js';

const TELEGRAM = 'brightpath:telegram-bot';
const WEBSITE = 'brightpath:website-form';
const SMILE = 'smile-dental:booking-form';
const PATH = (handle: string) => `/admin/v1/integrations/${handle}/brownouts`;
const DAY = 86_400_000;
// A window of the rules two days ahead, at a whole hour.
const RULES_START = Math.ceil((Date.now() + 2 * DAY) / 3_600_000) * 3_600_000;

let gw: Gateway;
beforeAll(async () => {
  gw = await startGateway({ rulesDir: rulesWith({ telegram: `[${window(RULES_START, 30)}]` }) });
});
afterAll(async () => {
  await gw.close();
  removeBrownoutRules();
});

interface AuditItem {
  action: string;
  actor: string;
  details: Record<string, unknown> | null;
}
const audit = async (g: Pick<Gateway, 'admin'>, handle: string) =>
  (await g.admin('GET', `/admin/v1/integrations/${handle}/audit`)).json<{ items: AuditItem[] }>().items;
const list = async (handle: string, query = '') =>
  (await gw.admin('GET', `${PATH(handle)}${query}`)).json<BrownoutPage>();
const legacyCall = (g: Pick<Gateway, 'app'>, key: string) =>
  g.app.inject({ method: 'GET', url: '/api/bots/api/leads/', headers: { 'x-bot-api-key': key } });
const sleepUntil = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms - Date.now())));

describe('brownout windows through the admin API', () => {
  it('are added (the start normalised to UTC), listed with the rules windows page by page, and cancelled, each change audited', async () => {
    const startMs = RULES_START + DAY;
    // The same moment written in Tashkent's zone (+05:00).
    const local = `${new Date(startMs + 5 * 3_600_000).toISOString().slice(0, 19)}+05:00`;
    const added = await gw.admin('POST', PATH(TELEGRAM), { start: local, minutes: 15 });
    expect(added.statusCode).toBe(201);
    const entry = added.json<BrownoutEntry>();
    expect(entry).toMatchObject({
      source: 'stored',
      start: at(startMs),
      end: at(startMs + 15 * 60_000),
      minutes: 15,
      status: 'scheduled',
    });
    expect(entry.created_by).toEqual(expect.any(String));

    const rulesEntry = {
      id: `rules:${at(RULES_START)}`,
      source: 'rules',
      start: at(RULES_START),
      end: at(RULES_START + 30 * 60_000),
      minutes: 30,
      status: 'scheduled',
      created_by: null,
      created_at: null,
    };
    expect((await list(TELEGRAM)).items).toEqual([rulesEntry, entry]);
    const first = await list(TELEGRAM, '?limit=1');
    expect(first.items).toEqual([rulesEntry]);
    const second = await list(TELEGRAM, `?limit=1&after=${first.next}`);
    expect(second).toEqual({ items: [entry], next: null });

    // A window of the rules is cancelled in the rules.
    const fromRules = await gw.admin('DELETE', `${PATH(TELEGRAM)}/${encodeURIComponent(rulesEntry.id)}`);
    expect(fromRules.statusCode).toBe(409);
    expect(fromRules.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(fromRules.json<{ detail: string }>().detail).toMatch(/set in the rules \(legacy\.brownouts\): remove it/);

    const cancelled = await gw.admin('DELETE', `${PATH(TELEGRAM)}/${entry.id}`);
    expect(cancelled.statusCode).toBe(200);
    expect(cancelled.json()).toEqual(entry);
    expect((await list(TELEGRAM)).items).toEqual([rulesEntry]);
    expect((await gw.admin('DELETE', `${PATH(TELEGRAM)}/${entry.id}`)).statusCode).toBe(404);

    const told = (await audit(gw, TELEGRAM)).filter(
      (e) => e.action === 'brownout_added' || e.action === 'brownout_cancelled',
    );
    expect(told.map((e) => [e.action, e.actor, e.details])).toEqual([
      [
        'brownout_cancelled',
        entry.created_by,
        { id: entry.id, start: entry.start, end: entry.end, why: `cancelled by ${entry.created_by}` },
      ],
      ['brownout_added', entry.created_by, { id: entry.id, start: entry.start, end: entry.end, minutes: 15 }],
    ]);
  });

  it('refuse bad input with a problem and store nothing', async () => {
    const before = (await list(TELEGRAM)).items;
    const refused = async (body: unknown, status: number, pattern: RegExp, handle = TELEGRAM) => {
      const res = await gw.admin('POST', PATH(handle), body);
      expect(res.statusCode, JSON.stringify(body)).toBe(status);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.json<{ detail: string }>().detail).toMatch(pattern);
    };
    const future = at(RULES_START + 3 * DAY);
    await refused({ start: '2020-01-01T00:00:00Z', minutes: 5 }, 422, /start: is in the past/);
    await refused({ start: future.slice(0, 19), minutes: 5 }, 422, /with its zone/);
    await refused({ start: future, minutes: BROWNOUT_MINUTES_MAX + 1 }, 422, /minutes/);
    await refused({ start: future }, 422, /minutes/);
    await refused(
      { start: at(RULES_START + 10 * 60_000), minutes: 5 },
      409,
      /overlaps the window .*\(set in the rules\)/,
    );
    await refused({ start: future, minutes: 5 }, 404, /No integration "brightpath:no-such"/, 'brightpath:no-such');
    expect((await list(TELEGRAM)).items).toEqual(before);

    // Overlapping a stored window, and one more than the cap, the rules' window counted.
    const starts = Array.from({ length: BROWNOUTS_PER_INTEGRATION_MAX - 1 }, (_, n) => RULES_START + (3 + n) * DAY);
    for (const [n, start] of starts.entries()) {
      expect((await gw.admin('POST', PATH(TELEGRAM), { start: at(start), minutes: 60 })).statusCode).toBe(201);
      if (n === 0)
        await refused({ start: at(start + 30 * 60_000), minutes: 60 }, 409, /overlaps the window from .*\(set by /);
    }
    const full = await gw.admin('POST', PATH(TELEGRAM), { start: at(RULES_START + 40 * DAY), minutes: 5 });
    expect(full.statusCode).toBe(409);
    expect(full.json()).toMatchObject({ code: 'limit-reached', max: BROWNOUTS_PER_INTEGRATION_MAX });
    expect((await list(TELEGRAM)).items).toHaveLength(BROWNOUTS_PER_INTEGRATION_MAX);

    // A switched-off integration gets none.
    await gw.issueKey(SMILE);
    expect(
      (await gw.admin('POST', `/admin/v1/integrations/${SMILE}/switch-off`, { reason: 'moved', force: true }))
        .statusCode,
    ).toBe(200);
    await refused({ start: future, minutes: 5 }, 409, /is switched off/, SMILE);
    expect((await list(SMILE)).items).toEqual([]);
  });
});

describe('a stored window in the gate, the report and the calendar', () => {
  it('refuses the legacy key inside it as a window of the rules does, counted in the report and told by the calendar', async () => {
    const key = 'stored-brownout-key-0123456789abcd';
    expect((await gw.admin('POST', `/admin/v1/integrations/${WEBSITE}/keys/import`, { key })).statusCode).toBe(201);
    expect((await legacyCall(gw, key)).statusCode).toBe(200);
    const startMs = Date.now() + 1_500;
    const added = await gw.admin('POST', PATH(WEBSITE), { start: at(startMs), minutes: 1 });
    expect(added.statusCode).toBe(201);
    await sleepUntil(startMs + 50);

    const refused = await legacyCall(gw, key);
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({
      code: 'brownout',
      brownout: { start: at(startMs), end: at(startMs + 60_000) },
    });
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(50);
    expect(retryAfter).toBeLessThanOrEqual(60);

    const report = (await gw.admin('GET', `/admin/v1/integrations/${WEBSITE}/report`)).json<MigrationReport>();
    expect(report.brownouts).toEqual([
      {
        start: at(startMs),
        end: at(startMs + 60_000),
        status: 'running',
        refused_calls: 1,
        last_refused: expect.any(String),
        routes: [{ route: 'GET /api/bots/api/leads/', calls: 1 }],
      },
    ]);
    // The gateway's calendar looks every second.
    const until = Date.now() + 5_000;
    let started: AuditItem | undefined;
    while (!started && Date.now() < until) {
      started = (await audit(gw, WEBSITE)).find((e) => e.action === 'brownout_started');
      if (!started) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(started).toMatchObject({ actor: 'calendar', details: { start: at(startMs), end: at(startMs + 60_000) } });
  });

  it('is cancelled by a switch-off (the windows to come) and by a rollback (any left), each audited', async () => {
    const startMs = RULES_START + 5 * DAY;
    const added = (await gw.admin('POST', PATH(WEBSITE), { start: at(startMs), minutes: 10 })).json<BrownoutEntry>();
    await gw.issueKey(WEBSITE);
    const off = await gw.admin('POST', `/admin/v1/integrations/${WEBSITE}/switch-off`, {
      reason: 'moved',
      force: true,
    });
    expect(off.statusCode).toBe(200);
    // The window still running from the test before and the one to come: both gone.
    expect((await list(WEBSITE)).items).toEqual([]);
    const cancelled = (await audit(gw, WEBSITE)).filter((e) => e.action === 'brownout_cancelled');
    expect(cancelled).toHaveLength(2);
    expect(cancelled.map((e) => e.details)).toContainEqual({
      id: added.id,
      start: added.start,
      end: added.end,
      why: 'switched off',
    });

    // A window left while switched off (written straight into the store) goes with the rollback.
    const integration = gw.rules.current().findIntegration(WEBSITE)!;
    await gw.store.transact((tx) =>
      tx.brownouts.insert({
        id: 'left-over-window',
        integrationId: integration.id,
        start: at(startMs),
        minutes: 10,
        end: at(startMs + 10 * 60_000),
        createdBy: 'someone',
        createdAt: at(Date.now()),
      }),
    );
    expect(
      (await gw.admin('POST', `/admin/v1/integrations/${WEBSITE}/rollback`, { reason: 'bot broke' })).statusCode,
    ).toBe(200);
    expect((await list(WEBSITE)).items.map((e) => e.id)).not.toContain('left-over-window');
    const afterRollback = (await audit(gw, WEBSITE)).find((e) => e.action === 'brownout_cancelled');
    expect(afterRollback?.details).toMatchObject({ id: 'left-over-window', why: expect.stringMatching(/rollback/) });
  });
});

describe('retention', () => {
  it('removes a stored window once it ended RETENTION_USAGE_DAYS ago, and keeps one that ended since', async () => {
    const integration = gw.rules.current().findIntegration(SMILE)!;
    const now = Date.now();
    const usageDays = 90;
    const stored = (id: string, endMs: number) => ({
      id,
      integrationId: integration.id,
      start: at(endMs - 5 * 60_000),
      minutes: 5,
      end: at(endMs),
      createdBy: 'retention-test',
      createdAt: at(endMs - DAY),
    });
    await gw.store.transact(async (tx) => {
      await tx.brownouts.insert(stored('ended-long-ago', now - usageDays * DAY - 60_000));
      await tx.brownouts.insert(stored('ended-lately', now - usageDays * DAY + 60_000));
    });
    const run = await runRetention(
      gw.store,
      { usageDays, answersDays: 90 },
      { idleMs: 30 * 60_000, maxMs: 12 * 3_600_000 },
      new Date(now),
    );
    expect(run.brownout_windows_deleted).toBe(1);
    expect((await list(SMILE)).items.map((e) => e.id)).toEqual(['ended-lately']);
  });
});

onEachEngineTwice((_engine, twins) => {
  describe('on two gateways sharing one database', () => {
    it('a window added through one refuses on the other once it starts, and its cancel lets the next call through there', async (context) => {
      const t = twins();
      if (!t) return context.skip();
      const key = 'twin-brownout-key-0123456789abcdef';
      expect((await t.admin(0, 'POST', `/admin/v1/integrations/${TELEGRAM}/keys/import`, { key })).statusCode).toBe(
        201,
      );
      const call = (i: number) => t.send(i, 'GET', '/api/bots/api/leads/', { 'x-bot-api-key': key });
      // Gateway B has read the integration's windows (none), and remembers them.
      expect((await call(1)).statusCode).toBe(200);
      const startMs = Date.now() + 2_000;
      const added = await t.admin(0, 'POST', PATH(TELEGRAM), { start: at(startMs), minutes: 1 });
      expect(added.statusCode).toBe(201);
      const before = await call(1);
      if (Date.now() < startMs) expect(before.statusCode).toBe(200);
      await sleepUntil(startMs + 50);
      const refused = await call(1);
      expect(refused.statusCode).toBe(403);
      expect(refused.json()).toMatchObject({ code: 'brownout', brownout: { start: at(startMs) } });
      expect((await call(1)).statusCode).toBe(403);

      const id = added.json<BrownoutEntry>().id;
      expect((await t.admin(0, 'DELETE', `${PATH(TELEGRAM)}/${id}`)).statusCode).toBe(200);
      expect((await call(1)).statusCode).toBe(200);
    });
  });
});
