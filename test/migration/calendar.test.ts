// The service team told of the brownout windows' moments (src/migration/calendar.ts): each start and
// end is one audit entry (actor `calendar`, the end with the calls refused in the window) and one info
// log line, told once however many replicas look; a switched-off integration's window is not told.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { startGateway, type Gateway } from '../helper.js';
import { onEachEngineTwice } from '../support/twin-gateways.js';
import { at, removeBrownoutRules, rulesWith, window } from '../support/brownout-rules.js';
import { END_TOLD_AFTER_MS, momentsBetween, tellMoment, tellReady } from '../../src/migration/calendar.js';
import { createUsageRecorder } from '../../src/migration/usage.js';

const TELEGRAM = 'brightpath:telegram-bot';
const silent = pino({ level: 'silent' });

interface AuditItem {
  action: string;
  actor: string;
  details: Record<string, unknown> | null;
}

// A window that started five minutes ago and lasted one: both its moments are within the catch-up
// of a process that starts now.
const START = Date.now() - 5 * 60_000;
const END = START + 60_000;
const RULES = () => rulesWith({ telegram: `[${window(START, 1)}]` });

let gw: Gateway;
beforeAll(async () => void (gw = await startGateway({ rulesDir: RULES() })));
afterAll(async () => {
  await gw.close();
  removeBrownoutRules();
});

describe("a brownout window's moments", () => {
  it('are found between two looks, the earliest first, the end once every replica has written its refusals', () => {
    const found = momentsBetween(gw.rules, START - 1, END + END_TOLD_AFTER_MS);
    expect(found.map((m) => [m.integration.handle, m.kind, m.at])).toEqual([
      [TELEGRAM, 'brownout_started', at(START)],
      [TELEGRAM, 'brownout_ended', at(END)],
    ]);
    expect(momentsBetween(gw.rules, START, END + END_TOLD_AFTER_MS - 1)).toEqual([]);
  });

  it('are told once, the end with the calls refused in the window', async () => {
    const usage = createUsageRecorder(gw.store, 60_000);
    const integration = gw.rules.current().findIntegration(TELEGRAM)!;
    usage.recordBrownout(integration.id, at(START), 'POST /api/bots/api/leads/');
    usage.recordBrownout(integration.id, at(START), 'GET /api/bots/api/leads/');
    const deps = { store: gw.store, usage };
    const [started, ended] = momentsBetween(gw.rules, START - 1, END + END_TOLD_AFTER_MS);
    // The gateway's runner starts with its first request (none yet): these calls tell them.
    expect(await tellMoment(deps, started!, silent)).toBe(true);
    expect(await tellMoment(deps, ended!, silent)).toBe(true);
    expect(await tellMoment(deps, ended!, silent)).toBe(false);
    const items = (await gw.admin('GET', `/admin/v1/integrations/${TELEGRAM}/audit`)).json<{ items: AuditItem[] }>()
      .items;
    const told = items.filter((e) => e.action.startsWith('brownout_'));
    expect(told.map((e) => e.action).sort()).toEqual(['brownout_ended', 'brownout_started']);
    expect(told.every((e) => e.actor === 'calendar')).toBe(true);
    expect(told.find((e) => e.action === 'brownout_started')!.details).toEqual({ start: at(START), end: at(END) });
    expect(told.find((e) => e.action === 'brownout_ended')!.details).toEqual({
      start: at(START),
      end: at(END),
      refused_calls: 2,
    });
    await usage.close();
  });
});

onEachEngineTwice((_engine, twins) => {
  describe('on two gateways sharing one database', () => {
    it('are told by exactly one of them', async (context) => {
      const t = twins();
      if (!t) return context.skip();
      // Both apps ready: each runner catches up at its first look.
      await Promise.all([t.admin(0, 'GET', '/admin/v1/integrations'), t.admin(1, 'GET', '/admin/v1/integrations')]);
      const until = Date.now() + 10_000;
      let told: AuditItem[] = [];
      while (Date.now() < until) {
        told = (await t.admin(0, 'GET', `/admin/v1/integrations/${TELEGRAM}/audit`))
          .json<{ items: AuditItem[] }>()
          .items.filter((e) => e.action.startsWith('brownout_'));
        if (told.length >= 2) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      // A further look of each runner would have told them again by now.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      told = (await t.admin(1, 'GET', `/admin/v1/integrations/${TELEGRAM}/audit`))
        .json<{ items: AuditItem[] }>()
        .items.filter((e) => e.action.startsWith('brownout_'));
      expect(told.map((e) => e.action).sort()).toEqual(['brownout_ended', 'brownout_started']);
      expect(told.find((e) => e.action === 'brownout_ended')!.details).toEqual({
        start: at(START),
        end: at(END),
        refused_calls: 0,
      });
    });
  });
}, RULES);

describe('an integration that became ready', () => {
  it('is told once per ready spell: an audit entry became_ready by calendar', async () => {
    const handle = 'brightpath:website-form';
    const key = await gw.issueKey(handle);
    expect(
      (await gw.submit(key, { event_id: 'ready-told', external_contact_id: 'web:9', first_name: 'R' })).statusCode,
    ).toBe(201);
    // The gateway's report flushes its own counters (the v1 call that succeeded), and says ready.
    const report = await gw.admin('GET', `/admin/v1/integrations/${handle}/report`);
    expect(report.json<{ readiness: { verdict: string } }>().readiness.verdict).toBe('ready');
    const usage = createUsageRecorder(gw.store, 60_000);
    const deps = { store: gw.store, usage };
    // The telegram bot has no v1 key (legacy): only the website form is looked at, and it is ready.
    expect(await tellReady(deps, gw.rules, silent)).toBe(1);
    expect(await tellReady(deps, gw.rules, silent)).toBe(0);
    const items = (await gw.admin('GET', `/admin/v1/integrations/${handle}/audit`)).json<{ items: AuditItem[] }>()
      .items;
    expect(items.filter((e) => e.action === 'became_ready')).toEqual([
      expect.objectContaining({ actor: 'calendar', details: { last_legacy_call: null } }),
    ]);
    await usage.close();
  });
});
