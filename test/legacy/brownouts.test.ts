// Brownout windows from the rules (src/rules/brownouts.ts): inside a window every call with the
// integration's legacy key is a 403 that says it is a brownout, names the v1 replacement, the guide,
// the sunset and the window's end, with Retry-After until it; outside, nothing changes. The workspace's
// list applies to the integrations that list none of their own. v1 keys are never affected.
import { afterAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../helper.js';
import { at, removeBrownoutRules, rulesWith, window } from '../support/brownout-rules.js';
import { createRulesHolder } from '../../src/rules/loader.js';
import { BROWNOUT_MINUTES_MAX, BROWNOUTS_PER_INTEGRATION_MAX } from '../../src/rules/brownouts.js';
import type { MigrationReport } from '../../src/migration/report.js';
import { reportText } from '../../src/cli/human.js';
import { brownoutSentence, brownoutsView } from '../../src/migration/brownout-report.js';
import { addUser, consoleClient } from '../support/console.js';

const gateways: Gateway[] = [];
afterAll(async () => {
  await Promise.all(gateways.map((g) => g.close()));
  removeBrownoutRules();
});

const TELEGRAM = 'brightpath:telegram-bot';
const WEBSITE = 'brightpath:website-form';

async function gatewayWith(windows: { telegram?: string; workspace?: string }) {
  const gw = await startGateway({ rulesDir: rulesWith(windows), console: { secureCookies: false } });
  gateways.push(gw);
  return gw;
}

async function legacyKey(gw: Gateway, handle: string, key: string) {
  expect((await gw.admin('POST', `/admin/v1/integrations/${handle}/keys/import`, { key })).statusCode).toBe(201);
  return key;
}

const legacyCall = (gw: Gateway, key: string, method: 'GET' | 'POST' = 'POST') =>
  gw.app.inject({
    method,
    url: '/api/bots/api/leads/',
    headers: { 'x-bot-api-key': key },
    ...(method === 'POST' ? { payload: { first_name: 'Brownout', phone: '+998901112233' } } : {}),
  });

describe('brownout windows', () => {
  it('refuse every legacy call inside a window with a 403 that says so, and leave v1 keys alone', async () => {
    const now = Date.now();
    const gw = await gatewayWith({ telegram: `[${window(now - 60_000, 10)}]` });
    const key = await legacyKey(gw, TELEGRAM, 'brownout-legacy-key-0123456789');
    const v1 = await gw.issueKey(TELEGRAM);
    const leadsBefore = await gw.inspect.leads.count();

    const refused = await legacyCall(gw, key);
    expect(refused.statusCode).toBe(403);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    const end = at(now - 60_000 + 10 * 60_000);
    expect(refused.json()).toMatchObject({
      type: 'urn:lead-gateway:problem:brownout',
      code: 'brownout',
      status: 403,
      replacement: { method: 'POST', path: '/api/integrations/v1/leads/' },
      migration_guide: '/docs/migration',
      sunset: '2027-03-01',
      brownout: { start: at(now - 60_000), end },
    });
    expect(refused.json<{ detail: string }>().detail).toContain(`until ${end}: a brownout`);
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(500);
    expect(retryAfter).toBeLessThanOrEqual(540);
    // The deprecation headers as on every legacy answer.
    expect(refused.headers.deprecation).toMatch(/^@\d+$/);
    expect(refused.headers.sunset).toBe('Mon, 01 Mar 2027 00:00:00 GMT');
    // Every route, reads too; nothing was stored.
    expect((await legacyCall(gw, key, 'GET')).statusCode).toBe(403);
    expect(await gw.inspect.leads.count()).toBe(leadsBefore);

    // The v1 key of the same integration is not affected.
    const lead = await gw.submit(v1, { event_id: 'brownout-v1', external_contact_id: 'telegram:5', first_name: 'V' });
    expect(lead.statusCode).toBe(201);
    // Nor is an integration without a window.
    const other = await legacyKey(gw, WEBSITE, 'brownout-website-key-0123456789');
    expect((await legacyCall(gw, other)).statusCode).toBe(201);
  });

  it('change nothing outside a window: before it starts and after it ended', async () => {
    const now = Date.now();
    const gw = await gatewayWith({
      telegram: `[${window(now - 10 * 60_000, 5)}, ${window(now + 60 * 60_000, 5)}]`,
    });
    const key = await legacyKey(gw, TELEGRAM, 'brownout-outside-key-0123456789');
    const res = await legacyCall(gw, key);
    expect(res.statusCode).toBe(201);
    expect(res.headers['retry-after']).toBeUndefined();
  });

  it('start at their start, read from the clock on every call', async () => {
    const startMs = Date.now() + 1_500;
    const gw = await gatewayWith({ telegram: `[${window(startMs, 1)}]` });
    const key = await legacyKey(gw, TELEGRAM, 'brownout-start-key-0123456789ab');
    const before = await legacyCall(gw, key, 'GET');
    // Answered before the start (the call itself is quick): not refused.
    if (Date.now() < startMs) expect(before.statusCode).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, startMs - Date.now()) + 50));
    expect((await legacyCall(gw, key, 'GET')).json()).toMatchObject({ code: 'brownout' });
  });

  it("apply the workspace's list to every integration that lists none, and an integration's own list instead of it", async () => {
    const now = Date.now();
    const gw = await gatewayWith({
      workspace: `[${window(now - 60_000, 10)}]`,
      telegram: '[]',
    });
    const website = await legacyKey(gw, WEBSITE, 'brownout-ws-website-0123456789');
    const telegram = await legacyKey(gw, TELEGRAM, 'brownout-ws-telegram-012345678');
    expect((await legacyCall(gw, website)).json()).toMatchObject({ code: 'brownout', sunset: null });
    expect((await legacyCall(gw, telegram)).statusCode).toBe(201);
  });

  it('never start on a switched-off integration: its answer stays the switch-off', async () => {
    const now = Date.now();
    const gw = await gatewayWith({ telegram: `[${window(now - 60_000, 10)}]` });
    const key = await legacyKey(gw, TELEGRAM, 'brownout-off-key-0123456789abcd');
    await gw.issueKey(TELEGRAM);
    const off = await gw.admin('POST', `/admin/v1/integrations/${TELEGRAM}/switch-off`, {
      reason: 'moved',
      force: true,
    });
    expect(off.statusCode).toBe(200);
    const res = await legacyCall(gw, key);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ code: 'forbidden' });
    expect(res.headers['retry-after']).toBeUndefined();
  });
});

describe('the calls refused in a brownout', () => {
  it('are counted apart per window and route in the report, the console and the CLI, and as legacy calls for readiness', async () => {
    const now = Date.now();
    const running = now - 2 * 60_000;
    const scheduled = now + 24 * 3_600_000;
    const gw = await gatewayWith({ telegram: `[${window(running, 30)}, ${window(scheduled, 15)}]` });
    const key = await legacyKey(gw, TELEGRAM, 'brownout-counted-key-0123456789');
    await gw.issueKey(TELEGRAM);
    for (const method of ['POST', 'POST', 'GET'] as const)
      expect((await legacyCall(gw, key, method)).statusCode).toBe(403);

    const report = (await gw.admin('GET', `/admin/v1/integrations/${TELEGRAM}/report`)).json<MigrationReport>();
    expect(report.brownouts).toEqual([
      {
        start: at(running),
        end: at(running + 30 * 60_000),
        status: 'running',
        refused_calls: 3,
        last_refused: expect.any(String),
        routes: [
          { route: 'GET /api/bots/api/leads/', calls: 1 },
          { route: 'POST /api/bots/api/leads/', calls: 2 },
        ],
      },
      {
        start: at(scheduled),
        end: at(scheduled + 15 * 60_000),
        status: 'scheduled',
        refused_calls: 0,
        last_refused: null,
        routes: [],
      },
    ]);
    // A bot that called in a brownout is alive: its calls are legacy calls, and the quiet period starts again.
    expect(report.legacy.calls_24h).toBe(3);
    expect(report.readiness.verdict).toBe('not_ready');
    expect(report.readiness.reasons.join('\n')).toMatch(/the deprecated interface was called at/);

    const text = reportText(report);
    expect(text).toContain(
      `A brownout is running since ${at(running).slice(0, 16).replace('T', ' ')} UTC: 3 calls from this bot refused so far.`,
    );
    expect(text).toContain(`A brownout is scheduled at ${at(scheduled).slice(0, 16).replace('T', ' ')} UTC.`);

    await addUser(gw, 'team-brownouts');
    const team = consoleClient(gw.app, { gw });
    expect((await team.signIn('team-brownouts')).statusCode).toBe(303);
    const page = (await team.get(`/console/integrations/${TELEGRAM}`)).body;
    expect(page).toContain('3 calls from this bot refused so far.');
    expect(page).toContain('POST /api/bots/api/leads/: 2');
    const overview = (await team.get('/console/integrations')).body;
    const row = overview.slice(overview.indexOf(`data-handle="${TELEGRAM}"`));
    expect(/data-col="next-moment">([^<]*)</.exec(row)?.[1]).toBe(
      `brownout until ${at(running + 30 * 60_000)
        .slice(0, 16)
        .replace('T', ' ')} UTC`,
    );
  });

  it('of a window past: its sentence says how many were refused in it, once it ended', async () => {
    const now = Date.now();
    // A window that started four minutes ago and lasts five: refused calls now, past once it ends.
    const start = now - 4 * 60_000;
    const gw = await gatewayWith({ telegram: `[${window(start, 5)}]` });
    const key = await legacyKey(gw, TELEGRAM, 'brownout-past-key-0123456789ab');
    expect((await legacyCall(gw, key)).statusCode).toBe(403);
    // The report flushes the counts; its view of the window, two minutes on, once it ended.
    await gw.admin('GET', `/admin/v1/integrations/${TELEGRAM}/report`);
    const rows = await gw.store.snapshot((r) =>
      r.states.brownoutRefusals(gw.rules.current().findIntegration(TELEGRAM)!.id, 100),
    );
    const [past] = brownoutsView(
      gw.rules.current().findIntegration(TELEGRAM)!.legacy.brownouts,
      rows,
      new Date(now + 2 * 60_000),
    );
    expect(brownoutSentence(past!)).toBe(
      `1 call from this bot was refused in the brownout of ${at(start).slice(0, 16).replace('T', ' ')} UTC.`,
    );
  });
});

describe('brownout windows in the rules: bad input', () => {
  const problemOf = (windows: { telegram?: string; workspace?: string }) => {
    try {
      createRulesHolder(rulesWith(windows));
      return null;
    } catch (error) {
      return (error as Error).message;
    }
  };

  it('refuse a start without a zone, overlapping windows, a window too long and too many windows', () => {
    expect(problemOf({ telegram: '[{ start: "2026-12-02T10:00:00", minutes: 5 }]' })).toMatch(
      /brownouts.*must be a date and time with its zone/s,
    );
    expect(
      problemOf({
        telegram:
          '[{ start: "2026-12-02T10:00:00Z", minutes: 30 }, { start: "2026-12-02T10:20:00+00:00", minutes: 5 }]',
      }),
    ).toMatch(/overlaps the window from 2026-12-02T10:00:00.000Z to 2026-12-02T10:30:00.000Z/);
    expect(
      problemOf({ telegram: `[{ start: "2026-12-02T10:00:00Z", minutes: ${BROWNOUT_MINUTES_MAX + 1} }]` }),
    ).toMatch(/minutes/);
    const many = Array.from({ length: BROWNOUTS_PER_INTEGRATION_MAX + 1 }, (_, i) =>
      window(Date.UTC(2026, 11, 2) + i * 3_600_000, 5),
    );
    expect(problemOf({ workspace: `[${many.join(', ')}]` })).toMatch(
      new RegExp(`at most ${BROWNOUTS_PER_INTEGRATION_MAX} brownout windows`),
    );
    // Windows in the past are the schedule's history, not an error: a rules file need not be edited after each.
    expect(problemOf({ telegram: '[{ start: "2020-01-01T00:00:00Z", minutes: 5 }]' })).toBeNull();
  });
});
