// Issuing the additional key links legacy-created leads, so answers about old leads find them (docs/api.md, answers).
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_RULES, startGateway, type Gateway } from '../helper.js';
import { LINK_REPORT_UNLINKED_ITEMS } from '../../src/migration/service.js';
import { UNLINKED_LEGACY_EXAMINED } from '../../src/migration/porting.js';
import { aContact, aLead } from '../support/records.js';

let gw: Gateway;
let rulesFile: string;

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-rules-'));
  cpSync(EXAMPLE_RULES, dir, { recursive: true });
  rulesFile = join(dir, 'brightpath.yaml');
  // Start without the legacy person-id rule: legacy leads are created unlinked.
  writeFileSync(
    rulesFile,
    readFileSync(rulesFile, 'utf8').replace('      external_contact_id: "telegram:{extra_data.telegram_id}"\n', ''),
  );
  gw = await startGateway({ rulesDir: dir });
});
afterAll(() => gw.close());

const legacyPost = (body: unknown) =>
  gw.app.inject({
    method: 'POST',
    url: '/api/bots/api/leads/',
    headers: { 'x-bot-api-key': 'tg-legacy-key-0001' },
    payload: body as object,
  });

describe('linking legacy leads', () => {
  it('reports unlinked leads, links them once a rule exists, and answers then reach them', async () => {
    await gw.admin('POST', '/admin/v1/integrations/brightpath:telegram-bot/keys/import', { key: 'tg-legacy-key-0001' });
    const withId = (await legacyPost({ first_name: 'Old', extra_data: { telegram_id: 555 } })).json();
    const withoutId = (await legacyPost({ first_name: 'Anonymous' })).json();

    const report = (await gw.admin('GET', '/admin/v1/integrations/brightpath:telegram-bot/report')).json();
    expect(report.unlinked_legacy_leads.map((l: { lead_id: string }) => l.lead_id).sort()).toEqual(
      [withId.id, withoutId.id].sort(),
    );
    expect(report.readiness.verdict).toBe('not_ready');

    writeFileSync(
      rulesFile,
      readFileSync(rulesFile, 'utf8').replace(
        '    legacy:\n',
        '    legacy:\n      external_contact_id: "telegram:{extra_data.telegram_id}"\n',
      ),
    );
    expect((await gw.admin('POST', '/admin/v1/rules/reload')).statusCode).toBe(200);

    const issued = (await gw.admin('POST', '/admin/v1/integrations/brightpath:telegram-bot/keys')).json();
    expect(issued.linked_leads).toBe(1);
    expect(issued.unlinked_leads).toEqual([
      { lead_id: withoutId.id, code: 'missing_member', reason: expect.stringContaining('lacks a member') },
    ]);

    const answers = await gw.app.inject({
      method: 'POST',
      url: '/api/integrations/v1/leads/answers/',
      headers: { authorization: `Bearer ${issued.key}` },
      payload: { event_id: 'old-1', external_contact_id: 'telegram:555', answers: { laptop: 'yes' } },
    });
    expect(answers.statusCode).toBe(200);
    expect(answers.json()).toMatchObject({ lead_id: withId.id, answers: { written: ['laptop'] } });
  });

  it('names the first LINK_REPORT_UNLINKED_ITEMS leads a run leaves unlinked and counts them all, by code', async () => {
    const integration = [...gw.rules.current().integrations.values()].find(
      (i) => i.handle === 'brightpath:telegram-bot',
    )!;
    const anonymous = LINK_REPORT_UNLINKED_ITEMS + 20;
    const ids: string[] = [];
    // Older than the lead of the test before: these come first.
    const OLDER = '2020-01-01T00:00:00.000Z';
    await gw.store.transact(async (tx) => {
      for (let i = 0; i < anonymous; i++) {
        const id = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
        await tx.contacts.insert(aContact(`anon-${i}`, { workspaceId: integration.workspace.id }));
        await tx.leads.insert(
          aLead(id, {
            contactId: `anon-${i}`,
            workspaceId: integration.workspace.id,
            integrationId: integration.id,
            origin: 'legacy',
            extraData: {},
            createdAt: OLDER,
            updatedAt: OLDER,
          }),
        );
        ids.push(id);
      }
    });
    const linked = await gw.admin('POST', '/admin/v1/integrations/brightpath:telegram-bot/link', {
      reason: 'many anonymous leads',
    });
    expect(linked.statusCode).toBe(200);
    const body = linked.json();

    // These and the missing_member lead of the test before, the oldest first.
    expect(body.unlinked_leads_total).toBe(anonymous + 1);
    expect(body.unlinked_by_code).toEqual({ no_rule: 0, missing_member: anonymous + 1, bound_to_another_person: 0 });
    expect(body.unlinked_leads).toHaveLength(LINK_REPORT_UNLINKED_ITEMS);
    expect(body.unlinked_leads.map((u: { lead_id: string }) => u.lead_id)).toEqual(
      ids.slice(0, LINK_REPORT_UNLINKED_ITEMS),
    );
    const report = (await gw.admin('GET', '/admin/v1/integrations/brightpath:telegram-bot/report')).json();
    expect(report.unlinked_legacy_leads_total).toBe(anonymous + 1);
    expect(report.unlinked_legacy_leads_total_capped).toBe(false);
    expect(report.readiness.reasons).toContain(
      `${anonymous + 1} legacy lead(s) are not linked: their answers would get 404`,
    );
  });

  it('counts the unlinked legacy leads up to UNLINKED_LEGACY_EXAMINED and says "more than" past it', async () => {
    const integration = [...gw.rules.current().integrations.values()].find(
      (i) => i.handle === 'brightpath:telegram-bot',
    )!;
    const before = (await gw.admin('GET', '/admin/v1/integrations/brightpath:telegram-bot/report')).json()
      .unlinked_legacy_leads_total;
    const OLDER = '2021-01-01T00:00:00.000Z';
    await gw.store.transact(async (tx) => {
      for (let i = before; i <= UNLINKED_LEGACY_EXAMINED; i++) {
        await tx.contacts.insert(aContact(`many-${i}`, { workspaceId: integration.workspace.id }));
        const id = `00000000-0000-4000-9000-${String(i).padStart(12, '0')}`;
        await tx.leads.insert(
          aLead(id, {
            contactId: `many-${i}`,
            workspaceId: integration.workspace.id,
            integrationId: integration.id,
            origin: 'legacy',
            extraData: {},
            createdAt: OLDER,
            updatedAt: OLDER,
          }),
        );
      }
    });
    const report = (await gw.admin('GET', '/admin/v1/integrations/brightpath:telegram-bot/report')).json();
    expect(report.unlinked_legacy_leads_total).toBe(UNLINKED_LEGACY_EXAMINED);
    expect(report.unlinked_legacy_leads_total_capped).toBe(true);
    expect(report.unlinked_legacy_leads).toHaveLength(100);
    expect(report.readiness.reasons).toContain(
      `more than ${UNLINKED_LEGACY_EXAMINED} legacy lead(s) are not linked: their answers would get 404`,
    );
  });
});
