// The whole migration story of one bot over real HTTP (docs/runbook.md).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../helper.js';
import { createAdminCredential, revokeAdminCredentials } from '../../src/admin/credentials.js';

let gw: Gateway;
let base: string;
/** Alice's personal admin token: the audit log names her from it. */
let alice: string;

beforeAll(async () => {
  gw = await startGateway();
  base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
  alice = (await createAdminCredential(gw.store, 'alice', 'test')).token;
  gw.secrets.add(alice);
});
afterAll(() => gw.close());

const LEGACY_KEY = 'old-bot-key-7f3a9c2e51';
const handle = 'brightpath:telegram-bot';

async function call(method: string, path: string, headers: Record<string, string>, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    body: text ? (JSON.parse(text) as Record<string, unknown>) : null,
  };
}
const admin = (method: string, path: string, body?: unknown) =>
  call(method, `/admin/v1${path}`, { authorization: 'Bearer test-admin-token-0123456789abcdef' }, body);
const asAlice = (method: string, path: string, body?: unknown) =>
  call(method, `/admin/v1${path}`, { authorization: `Bearer ${alice}` }, body);
const legacy = (method: string, path: string, body?: unknown, key = LEGACY_KEY) =>
  call(method, `/api/bots/api${path}`, { 'x-bot-api-key': key }, body);
const v1 = (key: string, body: unknown) =>
  call('POST', '/api/integrations/v1/leads/', { authorization: `Bearer ${key}` }, body);
const state = async () =>
  ((await admin('GET', '/integrations')).body!.items as { handle: string; state: string }[]).find(
    (i) => i.handle === handle,
  )!.state;

/** Every legacy route and method of docs/legacy-api.md, plus one the gateway does not know. */
const EVERY_LEGACY_CALL: [string, string][] = [
  ['POST', '/leads/'],
  ['PATCH', '/leads/00000000-0000-4000-8000-000000000001/'],
  ['PUT', '/leads/00000000-0000-4000-8000-000000000001/'],
  ['DELETE', '/leads/00000000-0000-4000-8000-000000000001/'],
  ['GET', '/leads/'],
  ['GET', '/leads/00000000-0000-4000-8000-000000000001/'],
  ['POST', '/leads/00000000-0000-4000-8000-000000000001/move/'],
  ['POST', '/leads/00000000-0000-4000-8000-000000000001/comments/'],
  ['POST', '/leads/00000000-0000-4000-8000-000000000001/payments/'],
  ['POST', '/tags/create/'],
  ['GET', '/boards/'],
  ['GET', '/statuses/'],
  ['GET', '/groups/'],
  ['GET', '/tags/'],
  ['GET', '/info/'],
  ['GET', '/something/else/'],
];

describe('migrating one bot', () => {
  it('runs from an imported legacy key to switch-off, rollback and renewal', async () => {
    // 1. The unchanged legacy bot works once its key is imported.
    expect((await legacy('POST', '/leads/', { first_name: 'Aziza' })).status).toBe(401);
    const imported = await asAlice('POST', `/integrations/${handle}/keys/import`, {
      key: LEGACY_KEY,
      reason: 'bot moves to the gateway',
    });
    expect(imported.status).toBe(201);
    // A 22-character key is too short to show any of it (keys.ts legacyKeyPrefix).
    expect(imported.body).toMatchObject({ kind: 'legacy', prefix: '' });
    const created = await legacy('POST', '/leads/', {
      first_name: 'Aziza',
      phone: '+998901110001',
      stage: 'Enrolled',
      extra_data: { telegram_id: 1001 },
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('deprecation')).toMatch(/^@\d+$/);
    expect(created.headers.get('sunset')).toBe('Mon, 01 Mar 2027 00:00:00 GMT');
    expect(created.headers.get('link')).toBe('</docs/migration>; rel="deprecation"; type="text/html"');
    // The Link's type is the truth: following it gives the guide as an HTML page.
    const guide = await fetch(`${base}/docs/migration`);
    expect(guide.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await guide.text()).toContain('<h1>Moving your bot to the v1 intake API</h1>');
    expect(await state()).toBe('legacy');

    // 2. The additional v1 key: both keys work; the state is migrating.
    const issued = await asAlice('POST', `/integrations/${handle}/keys`, { reason: 'runbook step 1' });
    expect(issued.status).toBe(201);
    expect(issued.body).toMatchObject({ state: 'migrating' });
    const v1Key = issued.body!.key as string;
    expect(
      (await v1(v1Key, { event_id: 'story-1', external_contact_id: 'telegram:1001', first_name: 'Aziza' })).body,
    ).toMatchObject({
      matched_by: 'external_contact_id',
      lead: { id: (created.body as { id: string }).id },
    });
    expect((await legacy('POST', '/leads/', { first_name: 'Bobur', extra_data: { telegram_id: 1002 } })).status).toBe(
      201,
    );

    // 3. Switch-off is refused while the bot still calls the old API, then forced.
    const refused = await asAlice('POST', `/integrations/${handle}/switch-off`, { reason: 'bot migrated' });
    expect(refused.status).toBe(409);
    expect(refused.body!.detail).toMatch(/quiet period/);
    expect(await state()).toBe('migrating');
    const forced = await asAlice('POST', `/integrations/${handle}/switch-off`, {
      reason: 'owner confirmed',
      force: true,
    });
    expect(forced.status).toBe(200);
    expect(forced.body).toMatchObject({ state: 'switched_off' });

    // 4. Every legacy route and method now answers 403, naming what replaces it; nothing is written.
    const leadsBefore = await gw.inspect.leads.count();
    for (const [method, path] of EVERY_LEGACY_CALL) {
      const res = await legacy(
        method,
        path,
        method === 'GET' || method === 'DELETE' ? undefined : { first_name: 'Late', name: 'x' },
      );
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.body!.detail).toMatch(/switched off/);
    }
    expect(await gw.inspect.leads.count()).toBe(leadsBefore);
    const post = await legacy('POST', '/leads/', { first_name: 'Late' });
    expect(post.body!.replacement).toEqual({ method: 'POST', path: '/api/integrations/v1/leads/' });
    const patch = await legacy('PATCH', '/leads/x/', { tag_ids: [] });
    expect(patch.body!.replacement).toEqual({ method: 'POST', path: '/api/integrations/v1/leads/answers/' });
    expect((await v1(v1Key, { event_id: 'story-2', first_name: 'Still works' })).status).toBe(201);

    // 5. Rollback restores the old key.
    expect(
      (await admin('POST', `/integrations/${handle}/rollback`, { reason: 'bot broke in production' })).body,
    ).toMatchObject({ state: 'migrating' });
    expect((await legacy('POST', '/leads/', { first_name: 'Back', extra_data: { telegram_id: 1003 } })).status).toBe(
      201,
    );
    expect((await admin('POST', `/integrations/${handle}/rollback`, { reason: 'again' })).status).toBe(409);

    // 6. "Renew key" stops every old key at once and issues one new v1 key.
    const renewed = await admin('POST', `/integrations/${handle}/keys/renew`, { reason: 'pressed renew' });
    expect(renewed.status).toBe(201);
    expect(renewed.body!.revoked_keys).toBe(2);
    expect((await legacy('POST', '/leads/', { first_name: 'Gone' })).status).toBe(401);
    expect((await v1(v1Key, { event_id: 'story-3', first_name: 'Gone' })).status).toBe(401);
    expect((await v1(renewed.body!.key as string, { event_id: 'story-3', first_name: 'New key' })).status).toBe(201);

    // The audit log tells the story, newest first, with who and why.
    const audit = (await admin('GET', `/integrations/${handle}/audit`)).body!.items as {
      action: string;
      actor: string;
      reason: string | null;
      to_state: string;
    }[];
    expect(audit.map((e) => e.action)).toEqual([
      'keys_renewed',
      'rolled_back',
      'switched_off_forced',
      'v1_key_issued',
      'legacy_key_imported',
    ]);
    expect(audit[2]).toMatchObject({ actor: 'alice', reason: 'owner confirmed', to_state: 'switched_off' });
    expect(audit[1]).toMatchObject({ actor: 'automation', reason: 'bot broke in production', to_state: 'migrating' });
    expect(audit.at(-1)).toMatchObject({ actor: 'alice', reason: 'bot moves to the gateway' });
  });

  it('takes no identity from the body: an actor member is refused, and a revoked credential stops at once', async () => {
    const refused = await asAlice('POST', `/integrations/smile-dental:booking-form/keys`, {
      actor: 'mallory',
      reason: 'r',
    });
    expect(refused.status).toBe(422);
    expect(refused.body!.errors).toEqual([{ path: '/actor', message: 'is not a field of this request' }]);
    const bob = await createAdminCredential(gw.store, 'bob', 'test');
    gw.secrets.add(bob.token);
    const asBob = () => call('GET', '/admin/v1/integrations', { authorization: `Bearer ${bob.token}` });
    expect((await asBob()).status).toBe(200);
    await revokeAdminCredentials(gw.store, 'bob');
    expect((await asBob()).status).toBe(401);
  });
});

describe('state moves that are refused', () => {
  it('cannot switch off before a v1 key exists, nor roll back what is not switched off', async () => {
    const dental = 'smile-dental:booking-form';
    const off = await admin('POST', `/integrations/${dental}/switch-off`, { reason: 'x', force: true });
    expect(off.status).toBe(409);
    expect(off.body!.detail).toMatch(/issue the additional key first/);
    expect((await admin('POST', `/integrations/${dental}/rollback`, { reason: 'x' })).status).toBe(409);
    expect((await admin('POST', `/integrations/${dental}/rollback`, {})).status).toBe(422);
  });

  it('imports a key by its SHA-256 and refuses the same key twice', async () => {
    const hash = 'd06489e9e6281b5afe7829d25538ab302929bbb7916d553c755d544fc4d781e3'; // sha256("dental-bot-key-2024")
    const res = await admin('POST', '/integrations/smile-dental:booking-form/keys/import', { hash });
    expect(res.status).toBe(201);
    expect(res.body!.prefix).toBe('sha256:d06489e9');
    expect((await legacy('POST', '/tags/create/', { name: 'VIP' }, 'dental-bot-key-2024')).status).toBe(201);
    expect(
      (await admin('POST', '/integrations/smile-dental:booking-form/keys/import', { key: 'dental-bot-key-2024' }))
        .status,
    ).toBe(409);
    expect(
      (await admin('POST', '/integrations/smile-dental:booking-form/keys/import', { key: 'abcdefgh', hash })).status,
    ).toBe(422);
  });
});
