// The "ported" flag beside the migration state, and the answers 404s the service team sees without a
// bot author telling them: through the admin API of the real app, on both engines.
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_RULES, startGateway, type Gateway } from '../helper.js';
import { createUsageRecorder, USAGE_CAPS } from '../../src/migration/usage.js';
import { clearPorted, markPorted } from '../../src/migration/porting.js';
import { runRetention } from '../../src/retention/retention.js';
import { SESSION_IDLE_MS, SESSION_MAX_MS } from '../../src/console/session-store.js';

let gw: Gateway;
beforeAll(async () => (gw = await startGateway()));
afterAll(() => gw.close());

const of = (handle: string) => `/admin/v1/integrations/${handle}`;
const report = async (handle: string) => (await gw.admin('GET', `${of(handle)}/report`)).json();
const audit = async (handle: string) =>
  (await gw.admin('GET', `${of(handle)}/audit`)).json().items as {
    action: string;
    actor: string;
    reason: string | null;
    details: Record<string, unknown> | null;
  }[];
const listed = async (handle: string) =>
  (await gw.admin('GET', '/admin/v1/integrations')).json().items.find((i: { handle: string }) => i.handle === handle);
const answers = (key: string, eventId: string, externalContactId: string) =>
  gw.app.inject({
    method: 'POST',
    url: '/api/integrations/v1/leads/answers/',
    headers: { authorization: `Bearer ${key}` },
    payload: { event_id: eventId, external_contact_id: externalContactId, answers: { laptop: 'yes' } },
  });
describe('the ported flag', () => {
  const handle = 'brightpath:website-form';

  it('is marked and cleared by the service team, audited, shown in the list and the report, and kept by renew and rollback', async () => {
    await gw.issueKey(handle);
    const marked = await gw.admin('POST', `${of(handle)}/ported`, { note: 'the owner says the bot is moved' });
    expect(marked.statusCode).toBe(200);
    expect(marked.json()).toEqual({
      ported_at: expect.any(String),
      ported_by: expect.any(String),
      note: 'the owner says the bot is moved',
    });
    const flag = marked.json();

    const again = await gw.admin('POST', `${of(handle)}/ported`, { note: 'twice' });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ code: 'conflict', ported: flag });

    expect((await listed(handle)).ported).toEqual(flag);
    expect((await report(handle)).ported).toEqual(flag);
    const [entry] = await audit(handle);
    expect(entry).toMatchObject({
      action: 'marked_ported',
      actor: flag.ported_by,
      reason: 'the owner says the bot is moved',
      details: { role: 'service_team' },
    });

    // Not a state: renew, switch-off and rollback move the state and leave the flag as it was.
    expect((await gw.admin('POST', `${of(handle)}/keys/renew`, { reason: 'leaked' })).statusCode).toBe(201);
    expect((await gw.admin('POST', `${of(handle)}/switch-off`, { reason: 'done', force: true })).statusCode).toBe(200);
    expect((await gw.admin('POST', `${of(handle)}/rollback`, { reason: 'one more week' })).statusCode).toBe(200);
    const after = await report(handle);
    expect(after.state).toBe('migrating');
    expect(after.ported).toEqual(flag);

    const cleared = await gw.admin('DELETE', `${of(handle)}/ported`, { reason: 'marked by mistake' });
    expect(cleared.statusCode).toBe(200);
    expect(cleared.json()).toEqual({ ported: null });
    expect((await report(handle)).ported).toBeNull();
    expect((await listed(handle)).ported).toBeNull();
    expect((await audit(handle))[0]).toMatchObject({
      action: 'ported_cleared',
      reason: 'marked by mistake',
      details: { ported_at: flag.ported_at, note: flag.note },
    });
    expect((await gw.admin('DELETE', `${of(handle)}/ported`)).statusCode).toBe(409);
  });

  it('is cleared by the service team only: an owner (the console) may mark it, never clear it', async () => {
    const integration = gw.rules.current().findIntegration(handle)!;
    const deps = { store: gw.store, usage: createUsageRecorder(gw.store) };
    await markPorted(deps, integration, { actor: 'owner@brightpath', note: null, role: 'owner' });
    await expect(clearPorted(deps, integration, { actor: 'owner@brightpath', role: 'owner' })).rejects.toMatchObject({
      code: 'forbidden',
      status: 403,
    });
    expect((await listed(handle)).ported).toMatchObject({ ported_by: 'owner@brightpath', note: null });
    expect((await audit(handle))[0]).toMatchObject({
      action: 'marked_ported',
      actor: 'owner@brightpath',
      details: { role: 'owner' },
    });
    expect((await gw.admin('DELETE', `${of(handle)}/ported`)).statusCode).toBe(200);
    await deps.usage.close();
  });

  it('is refused without the admin credential, for an unknown integration, and with a note holding control characters, changing nothing', async () => {
    const other = 'smile-dental:booking-form';
    const before = await audit(other);
    const anonymous = await gw.app.inject({ method: 'DELETE', url: `${of(other)}/ported` });
    expect(anonymous.statusCode).toBe(401);
    expect((await gw.admin('POST', `${of('nobody:nothing')}/ported`, { note: 'x' })).json()).toMatchObject({
      status: 404,
      code: 'not-found',
    });
    for (const note of ['line\n2026-11-26T00:00:00Z  forged', 'colour \u001b[2J']) {
      const res = await gw.admin('POST', `${of(other)}/ported`, { note });
      expect(res.statusCode).toBe(422);
      expect(res.json()).toMatchObject({
        code: 'validation-failed',
        errors: [{ path: '/note', message: expect.stringContaining('control characters') }],
      });
    }
    expect((await listed(other)).ported).toBeNull();
    expect(await audit(other)).toEqual(before);
  });
});

describe('the readiness reasons', () => {
  it('show the flag beside the traffic, keep the verdict, and warn when legacy calls go on after it', async () => {
    const handle = 'brightpath:telegram-bot';
    await gw.admin('POST', `${of(handle)}/keys/import`, { key: 'tg-legacy-key-porting' });
    const key = await gw.issueKey(handle);
    expect(
      (
        await gw.submit(key, {
          event_id: 'ported-1',
          external_contact_id: 'telegram:100',
          first_name: 'Malika',
          phone: '+998901230001',
        })
      ).statusCode,
    ).toBe(201);
    expect((await report(handle)).readiness).toEqual({ verdict: 'ready', reasons: [] });

    await gw.admin('POST', `${of(handle)}/ported`, { note: 'moved on Monday' });
    const marked = await report(handle);
    expect(marked.readiness).toEqual({
      verdict: 'ready',
      reasons: [`marked ported by ${marked.ported.ported_by} at ${marked.ported.ported_at}: moved on Monday`],
    });

    expect(
      (
        await gw.app.inject({
          method: 'GET',
          url: '/api/bots/api/boards/',
          headers: { 'x-bot-api-key': 'tg-legacy-key-porting' },
        })
      ).statusCode,
    ).toBe(200);
    const called = await report(handle);
    expect(called.readiness.verdict).toBe('not_ready');
    expect(called.readiness.reasons).toEqual([
      expect.stringMatching(/^the deprecated interface was called at .* within the 24 h quiet period$/),
      `marked ported by ${marked.ported.ported_by} at ${marked.ported.ported_at}: moved on Monday`,
      `warning: the deprecated interface was called after the integration was marked ported (last at ${called.legacy.last_seen})`,
    ]);
    // Outside the quiet period the verdict is the traffic's again, and the warning stays.
    const quiet = (await gw.admin('GET', `${of(handle)}/report?quiet_period_hours=0`)).json();
    expect(quiet.readiness.verdict).toBe('ready');
    expect(quiet.readiness.reasons).toContain(
      `warning: the deprecated interface was called after the integration was marked ported (last at ${called.legacy.last_seen})`,
    );
  });
});

describe('answers calls answered 404', () => {
  const handle = 'smile-dental:booking-form';

  it('are listed per external_contact_id after the flush, the 404 itself unchanged', async () => {
    const key = await gw.issueKey(handle);
    const unknown = await answers(key, 'nf-1', 'telegram:404');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({
      code: 'not-found',
      detail: expect.stringContaining('external_contact_id "telegram:404"'),
    });
    expect((await answers(key, 'nf-2', 'telegram:404')).statusCode).toBe(404);

    const r = await report(handle);
    expect(r.answers_not_found).toMatchObject({ ids: 1, calls: 2, next: null, ids_max: 1000 });
    expect(r.answers_not_found.items).toEqual([
      {
        external_contact_id: 'telegram:404',
        calls: 2,
        first_at: expect.any(String),
        last_at: expect.any(String),
        legacy_leads: [],
      },
    ]);
    expect(r.answers_not_found.items[0].first_at <= r.answers_not_found.items[0].last_at).toBe(true);
  });

  it('name the unlinked legacy lead of that person and why (not linked yet, or its id bound to another person); once linking binds it, the same event_id answers', async () => {
    // A legacy lead made while the integration had no legacy person-id rule is not linked (test/migration/linking.test.ts).
    const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-rules-'));
    cpSync(EXAMPLE_RULES, dir, { recursive: true });
    const rulesFile = join(dir, 'brightpath.yaml');
    const rule = '      external_contact_id: "telegram:{extra_data.telegram_id}"\n';
    writeFileSync(rulesFile, readFileSync(rulesFile, 'utf8').replace(rule, ''));
    const other = await startGateway({ rulesDir: dir });
    try {
      const tg = '/admin/v1/integrations/brightpath:telegram-bot';
      await other.admin('POST', `${tg}/keys/import`, { key: 'tg-legacy-key-unlinked' });
      const lead = (
        await other.app.inject({
          method: 'POST',
          url: '/api/bots/api/leads/',
          headers: { 'x-bot-api-key': 'tg-legacy-key-unlinked' },
          payload: { first_name: 'Old', extra_data: { telegram_id: 778 } },
        })
      ).json();
      const taken = (
        await other.app.inject({
          method: 'POST',
          url: '/api/bots/api/leads/',
          headers: { 'x-bot-api-key': 'tg-legacy-key-unlinked' },
          payload: { first_name: 'Taken', extra_data: { telegram_id: 901 } },
        })
      ).json();
      const key = await other.issueKey('brightpath:telegram-bot');
      // The rule comes after the key: the lead stays unlinked until linking runs again.
      writeFileSync(rulesFile, readFileSync(rulesFile, 'utf8').replace('    legacy:\n', `    legacy:\n${rule}`));
      expect((await other.admin('POST', '/admin/v1/rules/reload')).statusCode).toBe(200);
      const ask = () =>
        other.app.inject({
          method: 'POST',
          url: '/api/integrations/v1/leads/answers/',
          headers: { authorization: `Bearer ${key}` },
          payload: { event_id: 'old-1', external_contact_id: 'telegram:778', answers: { laptop: 'yes' } },
        });
      expect((await ask()).statusCode).toBe(404);
      const named = (await other.admin('GET', `${tg}/not-found`)).json();
      expect(named.items).toEqual([
        {
          external_contact_id: 'telegram:778',
          calls: 1,
          first_at: expect.any(String),
          last_at: expect.any(String),
          legacy_leads: [
            { lead_id: lead.id, code: 'not_linked', reason: expect.stringContaining('lead-gateway link') },
          ],
        },
      ]);

      // The id is bound to someone else (a v1 lead of another person, since deleted): linking cannot take it.
      const someoneElse = (
        await other.submit(key, {
          event_id: 'else-1',
          external_contact_id: 'telegram:901',
          first_name: 'Someone',
          phone: '+998901239901',
        })
      ).json();
      expect((await other.admin('DELETE', `/admin/v1/leads/${someoneElse.lead.id}`)).statusCode).toBeLessThan(300);
      const askTaken = () =>
        other.app.inject({
          method: 'POST',
          url: '/api/integrations/v1/leads/answers/',
          headers: { authorization: `Bearer ${key}` },
          payload: { event_id: 'taken-1', external_contact_id: 'telegram:901', answers: { laptop: 'yes' } },
        });
      expect((await askTaken()).statusCode).toBe(404);
      const both = (await other.admin('GET', `${tg}/not-found`)).json();
      expect(
        both.items.find((e: { external_contact_id: string }) => e.external_contact_id === 'telegram:901'),
      ).toMatchObject({
        legacy_leads: [
          {
            lead_id: taken.id,
            code: 'bound_to_another_person',
            reason: 'telegram:901 is already bound to another person',
          },
        ],
      });

      expect((await other.admin('POST', `${tg}/link`)).json()).toMatchObject({ linked_leads: 1 });
      expect((await ask()).statusCode).toBe(200);
      const after = (await other.admin('GET', `${tg}/report`)).json().answers_not_found.items;
      expect(
        after.find((e: { external_contact_id: string }) => e.external_contact_id === 'telegram:778'),
      ).toMatchObject({ calls: 1, legacy_leads: [] });
    } finally {
      await other.close();
    }
  });

  it('page the latest first, refuse a cursor they did not answer, hold their cap, and go with retention', async () => {
    // An integration no answers call reached yet: what it lists is what this test counted.
    const paged = 'brightpath:website-form';
    const integration = gw.rules.current().findIntegration(paged)!;
    expect((await gw.admin('GET', `${of(paged)}/not-found`)).json()).toEqual({
      items: [],
      next: null,
      ids: 0,
      calls: 0,
      ids_max: 1000,
    });
    const usage = createUsageRecorder(gw.store, 60_000, {
      ...USAGE_CAPS,
      notFoundIdsPerIntegration: 3,
      notFoundPending: 100,
    });
    const at = (iso: string) => new Date(iso);
    usage.recordNotFound(integration.id, 'a', at('2026-01-01T00:00:00.000Z'));
    usage.recordNotFound(integration.id, 'b', at('2026-11-20T00:00:00.000Z'));
    usage.recordNotFound(integration.id, 'c', at('2026-11-21T00:00:00.000Z'));
    usage.recordNotFound(integration.id, 'd', at('2026-11-22T00:00:00.000Z'));
    usage.recordNotFound(integration.id, 'b', at('2026-11-23T00:00:00.000Z'));
    await usage.close();

    const page1 = (await gw.admin('GET', `${of(paged)}/not-found?limit=2`)).json();
    expect(page1).toMatchObject({
      ids: 3,
      calls: 4,
      items: [
        {
          external_contact_id: 'b',
          calls: 2,
          first_at: '2026-11-20T00:00:00.000Z',
          last_at: '2026-11-23T00:00:00.000Z',
        },
        { external_contact_id: 'c' },
      ],
    });
    const page2 = (await gw.admin('GET', `${of(paged)}/not-found?limit=2&after=${page1.next}`)).json();
    expect(page2).toMatchObject({ items: [{ external_contact_id: 'a' }], next: null });

    const bad = await gw.admin('GET', `${of(paged)}/not-found?after=not-a-cursor`);
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ code: 'bad-request' });

    const run = await runRetention(
      gw.store,
      { usageDays: 30, answersDays: 90 },
      { idleMs: SESSION_IDLE_MS, maxMs: SESSION_MAX_MS },
      new Date('2026-11-26T12:00:00.000Z'),
    );
    expect(run).toMatchObject({ ran: true, not_found_deleted: 1 });
    expect(
      (await gw.admin('GET', `${of(paged)}/not-found`))
        .json()
        .items.map((e: { external_contact_id: string }) => e.external_contact_id),
    ).toEqual(['b', 'c']);
  });
});
