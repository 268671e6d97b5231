// The webhook endpoints' admin API (docs/webhooks.md): the lifecycle, the secret shown once, every
// change audited, bad input answered with a problem and nothing stored, a ping for one endpoint, the
// delivery log with its attempts, a resend.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startGateway, type Gateway } from '../helper.js';
import { claimDue, recordAttempt } from '../../src/webhooks/outbox.js';
import { WEBHOOK_ENDPOINTS_PER_WORKSPACE_MAX, WEBHOOK_URL_MAX_LENGTH } from '../../src/webhooks/endpoint-schemas.js';

const BASE = '/admin/v1/webhooks/endpoints';
const URL_OK = 'https://hooks.example.com/lead-gateway';

let gw: Gateway;
beforeAll(async () => void (gw = await startGateway()));
afterAll(() => gw.close());

const patch = (url: string, body: unknown) =>
  gw.app.inject({ method: 'PATCH', url, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: body as object });

interface Audited {
  integration_id: string;
  action: string;
  actor: string;
  details: Record<string, unknown>;
}
const auditOf = async (id: string) =>
  (await gw.admin('GET', '/admin/v1/audit?limit=200'))
    .json<{ items: Audited[] }>()
    .items.filter((e) => e.integration_id === id)
    .map((e) => e.action)
    .reverse();

const stored = async () => (await gw.inspect.dump('webhook_endpoints')).length;

describe('an endpoint through its life', () => {
  it('is created with its secret shown once, read, changed, rotated, pinged and deleted, each change audited', async () => {
    const created = await gw.admin('POST', BASE, {
      url: URL_OK,
      event_types: ['integration.switched_off', 'brownout.ended'],
      description: 'CRM alerts',
    });
    expect(created.statusCode, created.body).toBe(201);
    const endpoint = created.json<{ id: string; secret: string; event_types: string[]; workspace_id: null }>();
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(endpoint).toMatchObject({ url: URL_OK, workspace_id: null, paused: false, created_by: 'automation' });

    const one = await gw.admin('GET', `${BASE}/${endpoint.id}`);
    expect(one.statusCode).toBe(200);
    expect(one.body).not.toContain(endpoint.secret);
    expect(one.json()).not.toHaveProperty('secret');
    const list = await gw.admin('GET', `${BASE}?limit=10`);
    expect(list.json<{ items: { id: string }[] }>().items.map((e) => e.id)).toContain(endpoint.id);
    expect(list.body).not.toContain('whsec_');

    const changed = await patch(`${BASE}/${endpoint.id}`, { paused: true, event_types: ['brownout.started'] });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.json()).toMatchObject({ paused: true, event_types: ['brownout.started'] });
    expect(changed.body).not.toContain('whsec_');

    const rotated = await gw.admin('POST', `${BASE}/${endpoint.id}/rotate-secret`);
    expect(rotated.statusCode).toBe(200);
    const { secret, previous_secret_until } = rotated.json<{ secret: string; previous_secret_until: string }>();
    expect(secret).toMatch(/^whsec_/);
    expect(secret).not.toBe(endpoint.secret);
    const overlapHours = (Date.parse(previous_secret_until) - Date.now()) / 3_600_000;
    expect(overlapHours).toBeGreaterThan(23.9);
    expect(overlapHours).toBeLessThanOrEqual(24);

    const ping = await gw.admin('POST', `${BASE}/${endpoint.id}/ping`);
    expect(ping.statusCode, ping.body).toBe(202);
    const { event_id, delivery_id } = ping.json<{ event_id: string; delivery_id: string }>();
    expect(event_id).toMatch(/^msg_/);
    const log = await gw.admin('GET', `${BASE}/${endpoint.id}/deliveries`);
    expect(log.json<{ items: { id: string; event_id: string; status: string }[] }>().items).toEqual([
      expect.objectContaining({ id: delivery_id, event_id, status: 'pending' }),
    ]);

    // The secrets are never audited.
    const audit = await gw.admin('GET', '/admin/v1/audit?limit=200');
    expect(audit.body).not.toContain(endpoint.secret);
    expect(audit.body).not.toContain(secret);
    expect(await auditOf(endpoint.id)).toEqual([
      'webhook_endpoint_created',
      'webhook_endpoint_changed',
      'webhook_secret_rotated',
      'webhook_ping_sent',
    ]);

    expect((await gw.admin('DELETE', `${BASE}/${endpoint.id}`)).statusCode).toBe(204);
    expect((await gw.admin('GET', `${BASE}/${endpoint.id}`)).statusCode).toBe(404);
    expect((await gw.admin('DELETE', `${BASE}/${endpoint.id}`)).statusCode).toBe(404);
    expect((await auditOf(endpoint.id)).at(-1)).toBe('webhook_endpoint_deleted');
    expect((await gw.inspect.dump('webhook_deliveries')).flat()).not.toContain(endpoint.id);
  });
});

describe('bad input', () => {
  it('is answered with a problem and stores nothing', async () => {
    const before = await stored();
    const refused = async (body: unknown, pattern: RegExp, status = 422) => {
      const res = await gw.admin('POST', BASE, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(status);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.json<{ detail: string }>().detail).toMatch(pattern);
    };
    const types = ['integration.switched_off'];
    await refused(
      { url: 'http://hooks.example.com/x', event_types: types },
      /must use https.*WEBHOOK_ALLOW_HTTP_HOSTS/,
    );
    await refused({ url: 'ftp://hooks.example.com/x', event_types: types }, /must use https/);
    await refused({ url: 'hooks.example.com/x', event_types: types }, /not an absolute URL/);
    await refused({ url: 'https://user:pw@hooks.example.com/x', event_types: types }, /user name or password/);
    await refused({ url: `https://h.example.com/${'a'.repeat(WEBHOOK_URL_MAX_LENGTH)}`, event_types: types }, /url/);
    await refused({ url: URL_OK, event_types: ['lead.created'] }, /event_types/);
    await refused({ url: URL_OK, event_types: ['ping'] }, /event_types/);
    await refused({ url: URL_OK, event_types: [] }, /event_types/);
    await refused({ url: URL_OK, event_types: types, workspace: 'no-such-workspace' }, /no workspace/);
    await refused({ url: URL_OK, event_types: types, secret: 'whsec_mine' }, /secret/);
    expect(await stored()).toBe(before);
    expect((await patch(`${BASE}/nope`, { paused: true })).statusCode).toBe(404);
    expect((await patch(`${BASE}/nope`, {})).statusCode).toBe(422);
    expect((await gw.admin('POST', `/admin/v1/webhooks/events/msg_nope/resend?endpoint=x`)).statusCode).toBe(404);
  });

  it(`refuses an endpoint beyond ${WEBHOOK_ENDPOINTS_PER_WORKSPACE_MAX} of one workspace, and keeps none of it`, async () => {
    const workspace = gw.rules.current().findIntegration('smile-dental:booking-form')!.workspace.id;
    const body = { url: URL_OK, event_types: ['brownout.started'], workspace };
    for (let i = 0; i < WEBHOOK_ENDPOINTS_PER_WORKSPACE_MAX; i++)
      expect((await gw.admin('POST', BASE, body)).statusCode).toBe(201);
    const before = await stored();
    const over = await gw.admin('POST', BASE, body);
    expect(over.statusCode).toBe(409);
    expect(over.json()).toMatchObject({ limit: WEBHOOK_ENDPOINTS_PER_WORKSPACE_MAX });
    expect(await stored()).toBe(before);
  });
});

describe('deliveries', () => {
  it('are claimed once, their attempts logged and shown, and an event resent is pending again', async () => {
    const res = await gw.admin('POST', BASE, { url: URL_OK, event_types: ['brownout.ended'] });
    const { id } = res.json<{ id: string; secret: string }>();
    const { event_id, delivery_id } = (await gw.admin('POST', `${BASE}/${id}/ping`)).json<{
      event_id: string;
      delivery_id: string;
    }>();
    const claimed = await claimDue(gw.store, 50, 'replica-a', 30_000);
    const mine = claimed.filter((c) => c.delivery.id === delivery_id);
    expect(mine).toHaveLength(1);
    expect(mine[0]!.event.id).toBe(event_id);
    expect(JSON.parse(mine[0]!.event.payload)).toMatchObject({ type: 'ping', data: { endpoint_id: id } });
    expect(mine[0]!.secrets).toEqual([res.json<{ secret: string }>().secret]);
    // Claimed: no other replica takes it before its lease ends.
    expect((await claimDue(gw.store, 50, 'replica-b', 30_000)).map((c) => c.delivery.id)).not.toContain(delivery_id);
    const attempt = {
      deliveryId: delivery_id,
      at: new Date().toISOString(),
      statusCode: 500,
      durationMs: 12,
      responseHead: 'x'.repeat(5_000),
      error: null,
    };
    expect(await recordAttempt(gw.store, attempt, { status: 'failed' }, 'replica-b')).toBe(false);
    expect(await recordAttempt(gw.store, attempt, { status: 'failed' }, 'replica-a')).toBe(true);
    const log = (await gw.admin('GET', `${BASE}/${id}/deliveries`)).json<{
      items: { status: string; attempts: number; last_status: number; attempt_log: { response_head: string }[] }[];
    }>().items;
    expect(log[0]).toMatchObject({ status: 'failed', attempts: 1, last_status: 500 });
    expect(log[0]!.attempt_log).toHaveLength(2);
    expect(log[0]!.attempt_log[0]!.response_head).toHaveLength(1_024);

    const resent = await gw.admin('POST', `/admin/v1/webhooks/events/${event_id}/resend?endpoint=${id}`);
    expect(resent.statusCode, resent.body).toBe(202);
    expect(resent.json()).toEqual({ event_id, delivery_id });
    const again = (await gw.admin('GET', `${BASE}/${id}/deliveries`)).json<{
      items: { status: string; attempts: number }[];
    }>().items[0];
    expect(again).toMatchObject({ status: 'pending', attempts: 0 });
    expect((await auditOf(id)).at(-1)).toBe('webhook_event_resent');
  });
});
