// Issuing the additional key links legacy-created leads, so answers about old leads find them (docs/api.md, answers).
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_RULES, startGateway, type Gateway } from '../helper.js';

let gw: Gateway;
let rulesFile: string;

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-rules-'));
  cpSync(EXAMPLE_RULES, dir, { recursive: true });
  rulesFile = join(dir, 'brightpath.yaml');
  // Start without the legacy person-id rule: legacy leads are created unlinked.
  writeFileSync(rulesFile, readFileSync(rulesFile, 'utf8').replace('      external_contact_id: "telegram:{extra_data.telegram_id}"\n', ''));
  gw = await startGateway({ rulesDir: dir });
});
afterAll(() => gw.close());

const legacyPost = (body: unknown) =>
  gw.app.inject({ method: 'POST', url: '/api/bots/api/leads/', headers: { 'x-bot-api-key': 'tg-legacy-key-0001' }, payload: body as object });

describe('linking legacy leads', () => {
  it('reports unlinked leads, links them once a rule exists, and answers then reach them', async () => {
    await gw.admin('POST', '/admin/v1/integrations/brightpath:telegram-bot/keys/import', { key: 'tg-legacy-key-0001' });
    const withId = (await legacyPost({ first_name: 'Old', extra_data: { telegram_id: 555 } })).json();
    const withoutId = (await legacyPost({ first_name: 'Anonymous' })).json();

    const report = (await gw.admin('GET', '/admin/v1/integrations/brightpath:telegram-bot/report')).json();
    expect(report.unlinked_legacy_leads.map((l: { lead_id: string }) => l.lead_id).sort()).toEqual([withId.id, withoutId.id].sort());
    expect(report.readiness.verdict).toBe('not_ready');

    writeFileSync(rulesFile, readFileSync(rulesFile, 'utf8').replace('    legacy:\n', '    legacy:\n      external_contact_id: "telegram:{extra_data.telegram_id}"\n'));
    expect((await gw.admin('POST', '/admin/v1/rules/reload')).statusCode).toBe(200);

    const issued = (await gw.admin('POST', '/admin/v1/integrations/brightpath:telegram-bot/keys')).json();
    expect(issued.linked_leads).toBe(1);
    expect(issued.unlinked_leads).toEqual([{ lead_id: withoutId.id, code: 'missing_member', reason: expect.stringContaining('lacks a member') }]);

    const answers = await gw.app.inject({
      method: 'POST',
      url: '/api/integrations/v1/leads/answers/',
      headers: { authorization: `Bearer ${issued.key}` },
      payload: { event_id: 'old-1', external_contact_id: 'telegram:555', answers: { laptop: 'yes' } },
    });
    expect(answers.statusCode).toBe(200);
    expect(answers.json()).toMatchObject({ lead_id: withId.id, answers: { written: ['laptop'] } });
  });
});
