// The service team re-runs linking after a rule fix without a new key, and revokes one key by id.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_RULES, startGateway, type Gateway } from '../helper.js';
import { databaseEnv } from '../support/store.js';
import { builtCli } from '../support/child-gateway.js';

let gw: Gateway;
let rulesDir: string;
let rulesFile: string;
const handle = 'brightpath:telegram-bot';
const LEGACY_KEY = 'tg-legacy-key-relink-0001';

beforeAll(async () => {
  rulesDir = mkdtempSync(join(tmpdir(), 'lead-gateway-rules-'));
  cpSync(EXAMPLE_RULES, rulesDir, { recursive: true });
  rulesFile = join(rulesDir, 'brightpath.yaml');
  writeFileSync(
    rulesFile,
    readFileSync(rulesFile, 'utf8').replace('      external_contact_id: "telegram:{extra_data.telegram_id}"\n', ''),
  );
  gw = await startGateway({ rulesDir });
});
afterAll(() => gw.close());

const legacyPost = (body: unknown) =>
  gw.app.inject({
    method: 'POST',
    url: '/api/bots/api/leads/',
    headers: { 'x-bot-api-key': LEGACY_KEY },
    payload: body as object,
  });
const cli = (...args: string[]) => {
  const run = spawnSync(process.execPath, [builtCli(), ...args], {
    cwd: join(import.meta.dirname, '..', '..'),
    env: { ...process.env, ...databaseEnv(gw.store), RULES_DIR: rulesDir },
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { code: run.status, out: run.stdout, err: run.stderr };
};

describe('re-running the linking of legacy leads', () => {
  it('summarises unlinked leads by reason with the key set apart, then links after a rule fix without a new key', async () => {
    await gw.admin('POST', `/admin/v1/integrations/${handle}/keys/import`, { key: LEGACY_KEY });
    const withIds = [];
    for (let i = 0; i < 7; i++)
      withIds.push(
        (await legacyPost({ first_name: `Old${i}`, extra_data: { telegram_id: 7000 + i } })).json().id as string,
      );
    const anonymous = (await legacyPost({ first_name: 'Anonymous' })).json().id as string;

    // No rule yet: the CLI's issue-key prints counts by reason and the first ids, then the key apart.
    const issued = cli('issue-key', handle, '--reason', 'migration starts');
    expect(issued.code).toBe(0);
    const lines = issued.out.trimEnd().split('\n');
    expect(lines[0]).toBe('state: migrating');
    expect(lines[1]).toBe('legacy leads linked: 0; not linked: 8');
    expect(lines[2]).toMatch(/^ {2}8 no_rule \(e\.g\. the integration has no legacy\.external_contact_id rule\)$/);
    expect(lines[3]!.match(/[0-9a-f]{8}-[0-9a-f-]{27}/g)).toHaveLength(5);
    expect(lines[3]).toMatch(/and 3 more \(--json lists all\)$/);
    expect(lines.at(-1)).toMatch(/^ {2}lgv1_\S+$/);
    expect(lines.at(-2)).toBe('');
    expect(lines.filter((l) => /lgv1_/.test(l))).toHaveLength(1);

    // The rule is fixed; linking runs again through the admin API, no key is issued.
    writeFileSync(
      rulesFile,
      readFileSync(rulesFile, 'utf8').replace(
        '    legacy:\n',
        '    legacy:\n      external_contact_id: "telegram:{extra_data.telegram_id}"\n',
      ),
    );
    expect((await gw.admin('POST', '/admin/v1/rules/reload')).statusCode).toBe(200);
    const keysBefore = (await gw.admin('GET', `/admin/v1/integrations/${handle}/keys`)).json().items.length;
    const linked = await gw.admin('POST', `/admin/v1/integrations/${handle}/link`, { reason: 'legacy rule fixed' });
    expect(linked.statusCode).toBe(200);
    expect(linked.json()).toEqual({
      linked_leads: 7,
      unlinked_leads: [
        { lead_id: anonymous, code: 'missing_member', reason: expect.stringContaining('lacks a member') },
      ],
      unlinked_leads_total: 1,
      unlinked_by_code: { no_rule: 0, missing_member: 1, bound_to_another_person: 0 },
    });
    expect((await gw.admin('GET', `/admin/v1/integrations/${handle}/keys`)).json().items).toHaveLength(keysBefore);
    const report = (await gw.admin('GET', `/admin/v1/integrations/${handle}/report`)).json();
    expect(report.unlinked_legacy_leads.map((l: { lead_id: string }) => l.lead_id)).toEqual([anonymous]);
    const audit = (await gw.admin('GET', `/admin/v1/integrations/${handle}/audit`)).json().items;
    expect(audit[0]).toMatchObject({
      action: 'legacy_leads_linked',
      reason: 'legacy rule fixed',
      details: { linked_leads: 7, unlinked_leads: 1 },
    });

    // Again from the CLI: nothing left to link but the anonymous lead; --json lists it.
    const again = cli('--json', 'link', handle);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.out)).toMatchObject({
      linked_leads: 0,
      unlinked_leads: [expect.objectContaining({ lead_id: anonymous, code: 'missing_member' })],
      unlinked_leads_total: 1,
    });
    expect(withIds).toHaveLength(7);
  });
});

describe('revoking one key', () => {
  it('stops that key at once, keeps the others, is audited, and refuses a second revoke or a foreign key', async () => {
    const first = await gw.issueKey('brightpath:website-form');
    const second = await gw.issueKey('brightpath:website-form');
    const keys = (await gw.admin('GET', '/admin/v1/integrations/brightpath:website-form/keys')).json().items as {
      id: string;
      prefix: string;
    }[];
    const firstId = keys.find((k) => first.startsWith(k.prefix))!.id;
    const submit = (key: string, n: number) => gw.submit(key, { event_id: `revoke-${n}`, first_name: 'Rustam' });
    expect((await submit(first, 1)).statusCode).toBe(201);

    const revoked = await gw.admin('POST', `/admin/v1/integrations/brightpath:website-form/keys/${firstId}/revoke`, {
      reason: 'leaked in a screenshot',
    });
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json()).toMatchObject({ id: firstId, revoked_at: expect.any(String) });
    expect((await submit(first, 2)).statusCode).toBe(401);
    expect((await submit(second, 3)).statusCode).toBe(201);
    const audit = (await gw.admin('GET', '/admin/v1/integrations/brightpath:website-form/audit')).json().items;
    expect(audit[0]).toMatchObject({
      action: 'key_revoked',
      reason: 'leaked in a screenshot',
      details: { key_id: firstId, kind: 'v1' },
    });

    expect(
      (await gw.admin('POST', `/admin/v1/integrations/brightpath:website-form/keys/${firstId}/revoke`)).statusCode,
    ).toBe(409);
    expect((await gw.admin('POST', `/admin/v1/integrations/${handle}/keys/${firstId}/revoke`)).statusCode).toBe(404);
    expect(
      (await gw.admin('POST', '/admin/v1/integrations/brightpath:website-form/keys/not-a-uuid/revoke')).statusCode,
    ).toBe(422);

    // The CLI revokes by id too.
    const secondId = (await gw.admin('GET', '/admin/v1/integrations/brightpath:website-form/keys'))
      .json()
      .items.find((k: { id: string; revoked_at: string | null }) => k.revoked_at === null).id;
    const cliRevoke = cli('revoke-key', 'brightpath:website-form', secondId, '--reason', 'rotation');
    expect(cliRevoke.code).toBe(0);
    expect(cliRevoke.out).toMatch(
      new RegExp(`^Revoked v1 key ${secondId} \\(lgv1_\\S+…\\) of brightpath:website-form\\.`),
    );
    expect((await submit(second, 4)).statusCode).toBe(401);
  });
});
