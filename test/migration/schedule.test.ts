// The scheduled switch-off (src/migration/schedule.ts): carried out at its moment as the actor
// `schedule` only when the integration is ready, refused with its reasons and tried again otherwise,
// forced when asked, given up after its deadline, cancelled by a rollback; bad input changes nothing;
// of two gateways on one database exactly one carries it out.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../helper.js';
import { onEachEngineTwice } from '../support/twin-gateways.js';
import { removeBrownoutRules, rulesWith } from '../support/brownout-rules.js';
import type { ScheduleView } from '../../src/migration/schedule-view.js';

const TELEGRAM = 'brightpath:telegram-bot';
const WEBSITE = 'brightpath:website-form';
const SMILE = 'smile-dental:booking-form';
const PATH = (handle: string) => `/admin/v1/integrations/${handle}/switch-off/schedule`;

let gw: Gateway;
beforeAll(async () => void (gw = await startGateway()));
afterAll(() => gw.close());

const soon = (ms = 1_200) => new Date(Date.now() + ms).toISOString();

interface AuditItem {
  action: string;
  actor: string;
  to_state: string | null;
  details: Record<string, unknown> | null;
}
const audit = async (g: { admin: Gateway['admin'] }, handle: string) =>
  (await g.admin('GET', `/admin/v1/integrations/${handle}/audit`)).json<{ items: AuditItem[] }>().items;

/** Waits (at most 10 s) until the schedule is no longer the pending one it was, or has attempted `attempts` times. */
async function settled(g: { admin: Gateway['admin'] }, handle: string, attempts = 1): Promise<ScheduleView> {
  const until = Date.now() + 10_000;
  for (;;) {
    const view = (await g.admin('GET', PATH(handle))).json<ScheduleView>();
    if (view.status !== 'pending' || view.attempts >= attempts || Date.now() > until) return view;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const stateOf = async (handle: string) =>
  (await gw.admin('GET', '/admin/v1/integrations'))
    .json<{ items: { handle: string; state: string }[] }>()
    .items.find((i) => i.handle === handle)?.state;

describe('scheduling a switch-off: bad input changes nothing', () => {
  it('refuses a moment in the past or without a zone, a bad deadline or retry, and an integration not migrating', async () => {
    const v1 = await gw.issueKey(WEBSITE);
    expect(v1).toBeTruthy();
    const refused = async (body: unknown, status: number, pattern: RegExp, handle = WEBSITE) => {
      const res = await gw.admin('PUT', PATH(handle), body);
      expect(res.statusCode, JSON.stringify(body)).toBe(status);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.json<{ detail: string }>().detail).toMatch(pattern);
    };
    await refused({ at: '2020-01-01T00:00:00Z' }, 422, /at: is in the past/);
    await refused({ at: '2027-01-01T10:00:00' }, 422, /with its zone/);
    await refused({ at: '2027-01-01T10:00:00Z', deadline: '2026-12-31T10:00:00Z' }, 422, /deadline: is before/);
    await refused({ at: '2027-01-01T10:00:00Z', deadline: '2027-06-01T10:00:00Z' }, 422, /more than 90 days/);
    await refused({ at: '2027-01-01T10:00:00Z', retry_minutes: 1 }, 422, /retry_minutes/);
    await refused({ at: '2027-01-01T10:00:00Z', when: 'now' }, 422, /when/);
    // No v1 key yet: nothing to switch off to.
    await refused({ at: '2027-01-01T10:00:00Z' }, 409, /has no v1 key yet/, SMILE);
    expect((await gw.admin('GET', PATH(WEBSITE))).statusCode).toBe(404);
    expect((await gw.admin('GET', PATH(SMILE))).statusCode).toBe(404);
    expect((await audit(gw, WEBSITE)).filter((e) => e.action === 'switch_off_scheduled')).toHaveLength(0);
  });
});

describe('a scheduled switch-off', () => {
  it('is refused while the bot still calls the old interface, with the reasons kept, and tried again later', async () => {
    const legacyKey = 'schedule-legacy-key-0123456789abcd';
    expect(
      (await gw.admin('POST', `/admin/v1/integrations/${TELEGRAM}/keys/import`, { key: legacyKey })).statusCode,
    ).toBe(201);
    await gw.issueKey(TELEGRAM);
    const call = await gw.app.inject({
      method: 'GET',
      url: '/api/bots/api/leads/',
      headers: { 'x-bot-api-key': legacyKey },
    });
    expect(call.statusCode).toBe(200);
    const at = soon();
    const put = await gw.admin('PUT', PATH(TELEGRAM), { at, retry_minutes: 5, reason: 'announced in November' });
    expect(put.statusCode).toBe(200);
    expect(put.json()).toMatchObject({ at, status: 'pending', attempts: 0, next_attempt_at: at, force: false });

    const view = await settled(gw, TELEGRAM);
    expect(view).toMatchObject({ status: 'pending', attempts: 1 });
    expect(view.last_refusal).toMatch(/^refused at .*the deprecated interface was called at/);
    expect(Date.parse(view.next_attempt_at!) - Date.parse(view.last_attempt_at!)).toBe(5 * 60_000);
    expect(await stateOf(TELEGRAM)).toBe('migrating');
    const refusals = (await audit(gw, TELEGRAM)).filter((e) => e.action === 'scheduled_switch_off_refused');
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toMatchObject({ actor: 'schedule' });
    // The report and the console's overview carry it.
    const report = (await gw.admin('GET', `/admin/v1/integrations/${TELEGRAM}/report`)).json<{
      switch_off_schedule: ScheduleView;
    }>();
    expect(report.switch_off_schedule).toEqual(view);

    // Cancelled: nothing pending, audited; a second cancel is a 404.
    const cancelled = await gw.admin('DELETE', PATH(TELEGRAM));
    expect(cancelled.statusCode).toBe(200);
    expect(cancelled.json()).toMatchObject({ status: 'cancelled', next_attempt_at: null });
    expect((await gw.admin('DELETE', PATH(TELEGRAM))).statusCode).toBe(404);
  });

  it('with force switches off whatever the verdict, once, as `schedule`; a rollback finds nothing pending', async () => {
    const at = soon();
    expect((await gw.admin('PUT', PATH(TELEGRAM), { at, force: true })).statusCode).toBe(200);
    const view = await settled(gw, TELEGRAM);
    expect(view).toMatchObject({ status: 'done', attempts: 1, next_attempt_at: null });
    expect(await stateOf(TELEGRAM)).toBe('switched_off');
    const forced = (await audit(gw, TELEGRAM)).filter((e) => e.action === 'switched_off_forced');
    expect(forced).toHaveLength(1);
    expect(forced[0]).toMatchObject({ actor: 'schedule', to_state: 'switched_off', details: { scheduled_at: at } });
    // Scheduling a switched-off integration is a conflict.
    expect((await gw.admin('PUT', PATH(TELEGRAM), { at: soon(60_000) })).statusCode).toBe(409);
    expect(
      (await gw.admin('POST', `/admin/v1/integrations/${TELEGRAM}/rollback`, { reason: 'bot broke' })).statusCode,
    ).toBe(200);
  });

  it('is carried out when the integration is ready, and a rollback cancels one pending', async () => {
    // The website form: a v1 key (issued above), a v1 call that succeeded, no legacy call.
    const key = await gw.issueKey(WEBSITE);
    const lead = await gw.submit(key, { event_id: 'ready-1', external_contact_id: 'web:1', first_name: 'Ready' });
    expect(lead.statusCode).toBe(201);
    const verdict = (await gw.admin('GET', `/admin/v1/integrations/${WEBSITE}/report`)).json<{
      readiness: { verdict: string };
    }>().readiness.verdict;
    expect(verdict).toBe('ready');
    expect((await gw.admin('PUT', PATH(WEBSITE), { at: soon() })).statusCode).toBe(200);
    expect(await settled(gw, WEBSITE)).toMatchObject({ status: 'done', attempts: 1 });
    expect(await stateOf(WEBSITE)).toBe('switched_off');
    expect((await audit(gw, WEBSITE)).filter((e) => e.action === 'switched_off')).toMatchObject([
      { actor: 'schedule' },
    ]);

    // Rolled back, scheduled far ahead, switched off by hand, rolled back: the schedule is cancelled.
    await gw.admin('POST', `/admin/v1/integrations/${WEBSITE}/rollback`, { reason: 'again' });
    expect((await gw.admin('PUT', PATH(WEBSITE), { at: soon(3_600_000) })).statusCode).toBe(200);
    await gw.admin('POST', `/admin/v1/integrations/${WEBSITE}/switch-off`, { reason: 'by hand', force: true });
    await gw.admin('POST', `/admin/v1/integrations/${WEBSITE}/rollback`, { reason: 'and back' });
    const after = (await gw.admin('GET', PATH(WEBSITE))).json<ScheduleView>();
    expect(after).toMatchObject({ status: 'cancelled', next_attempt_at: null });
    expect(after.last_refusal).toMatch(/cancelled by the rollback of/);
  });

  it('is given up once its deadline passed, saying why', async () => {
    // The telegram bot called the old interface within the quiet period (the first test): not ready.
    const at = soon();
    const deadline = new Date(Date.parse(at) + 60_000).toISOString();
    expect((await gw.admin('PUT', PATH(TELEGRAM), { at, deadline, retry_minutes: 5 })).statusCode).toBe(200);
    const view = await settled(gw, TELEGRAM);
    expect(view).toMatchObject({ status: 'refused', attempts: 1, next_attempt_at: null });
    expect(view.last_refusal).toContain(`no attempt after the deadline ${deadline}`);
    expect(await stateOf(TELEGRAM)).toBe('migrating');
  });
});

onEachEngineTwice((_engine, twins) => {
  describe('on two gateways sharing one database', () => {
    it('is carried out by exactly one of them: one switch-off, one audit entry', async (context) => {
      const t = twins();
      if (!t) return context.skip();
      expect((await t.admin(0, 'POST', `/admin/v1/integrations/${TELEGRAM}/keys`)).statusCode).toBe(201);
      // Both apps ready: their runners look every second.
      await t.admin(1, 'GET', '/admin/v1/integrations');
      expect((await t.admin(1, 'PUT', PATH(TELEGRAM), { at: soon(), force: true })).statusCode).toBe(200);
      const view = await settled({ admin: (m, u, b) => t.admin(0, m, u, b) }, TELEGRAM);
      expect(view.status).toBe('done');
      // A further second: a second replica's look would have acted by now.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const items = (await t.admin(1, 'GET', `/admin/v1/integrations/${TELEGRAM}/audit`)).json<{
        items: AuditItem[];
      }>().items;
      expect(items.filter((e) => e.action === 'switched_off_forced')).toHaveLength(1);
      expect(items.filter((e) => e.action === 'switch_off_schedule_cancelled')).toHaveLength(0);
    });
  });
});

describe('the sunset as the schedule (a workspace opted in)', () => {
  it('is scheduled at the sunset day, 00:00 UTC, by rules, once the integration migrates; not where the workspace did not opt in', async () => {
    const today = new Date().toISOString().slice(0, 10);
    const dir = rulesWith({});
    const file = join(dir, 'brightpath.yaml');
    writeFileSync(
      file,
      readFileSync(file, 'utf8')
        .replace('      sunset: 2027-03-01\n', `      sunset: ${today}\n`)
        .replace('  custom_fields:\n', '  legacy:\n    switch_off_at_sunset: true\n  custom_fields:\n'),
    );
    const g = await startGateway({ rulesDir: dir });
    try {
      await g.issueKey(TELEGRAM);
      // The runner starts with the first request and looks each second.
      const until = Date.now() + 10_000;
      let res = await g.admin('GET', PATH(TELEGRAM));
      while (res.statusCode === 404 && Date.now() < until) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        res = await g.admin('GET', PATH(TELEGRAM));
      }
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ at: `${today}T00:00:00.000Z`, created_by: 'rules', force: false });
      const scheduled = (await audit(g, TELEGRAM)).filter((e) => e.action === 'switch_off_scheduled');
      expect(scheduled).toMatchObject([{ actor: 'rules' }]);
    } finally {
      await g.close();
      removeBrownoutRules();
    }
    // The example rules do not opt in: no schedule from a sunset there (the gateway of the tests above).
    expect((await audit(gw, WEBSITE)).filter((e) => e.actor === 'rules')).toEqual([]);
  });
});
