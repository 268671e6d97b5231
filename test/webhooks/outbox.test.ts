// The outbox guarantee (docs/webhooks.md): an event and its deliveries are written in the unit of the
// change that causes them, so a change that commits leaves its event and one pending delivery per
// subscribed endpoint, and a change refused or rolled back leaves none.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../helper.js';
import { writeEvent } from '../../src/webhooks/outbox.js';
import type { WebhookEvent } from '../../src/store/repos/webhooks.js';

const WEBSITE = 'brightpath:website-form';
const SMILE = 'smile-dental:booking-form';
const STATE_TYPES = [
  'integration.key_issued',
  'integration.switched_off',
  'integration.rolled_back',
  'integration.renewed',
];

let gw: Gateway;
let brightpath: string;
let smile: string;
beforeAll(async () => {
  gw = await startGateway();
  const create = async (workspace: string | undefined) => {
    const res = await gw.admin('POST', '/admin/v1/webhooks/endpoints', {
      url: 'https://hooks.example.com/lead-gateway',
      event_types: STATE_TYPES,
      ...(workspace === undefined ? {} : { workspace }),
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json<{ id: string }>().id;
  };
  brightpath = await create(gw.rules.current().findIntegration(WEBSITE)!.workspace.id);
  smile = await create(gw.rules.current().findIntegration(SMILE)!.workspace.id);
});
afterAll(() => gw.close());

/** Every event the outbox holds, oldest first, with the endpoints a delivery of it was written for. */
async function outbox(): Promise<(WebhookEvent & { body: Record<string, unknown>; endpoints: string[] })[]> {
  const ids = (await gw.inspect.dump('webhook_events')).map((row) => String(row[0]));
  const deliveries = (await gw.inspect.dump('webhook_deliveries')).map((row) => row.map(String));
  const events = await gw.store.snapshot((r) => Promise.all(ids.map((id) => r.webhooks.getEvent(id))));
  return events
    .map((e) => ({
      ...e!,
      body: JSON.parse(e!.payload) as Record<string, unknown>,
      endpoints: deliveries
        .filter((d) => d.includes(e!.id))
        .map((d) => [brightpath, smile].find((x) => d.includes(x))!),
    }))
    .sort((a, b) => (a.id < b.id ? -1 : 1));
}

describe('the outbox: a state change that commits', () => {
  it('leaves its event, in the envelope, and a pending delivery for each endpoint of its workspace alone', async () => {
    await gw.issueKey(WEBSITE);
    let events = await outbox();
    expect(events.map((e) => e.type)).toEqual(['integration.key_issued']);
    const [issued] = events;
    expect(issued!.id).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(issued!.endpoints).toEqual([brightpath]);
    expect(issued!.body).toMatchObject({
      type: 'integration.key_issued',
      timestamp: issued!.createdAt,
      data: {
        integration: { handle: WEBSITE },
        workspace_id: gw.rules.current().findIntegration(WEBSITE)!.workspace.id,
        actor: 'automation',
        state: 'migrating',
      },
    });
    // No key, not even its prefix, is in the event.
    expect(issued!.payload).not.toMatch(/lgv1_/);

    const off = await gw.admin('POST', `/admin/v1/integrations/${WEBSITE}/switch-off`, {
      force: true,
      reason: 'moved',
    });
    expect(off.statusCode, off.body).toBe(200);
    const back = await gw.admin('POST', `/admin/v1/integrations/${WEBSITE}/rollback`, { reason: 'bot broke' });
    expect(back.statusCode, back.body).toBe(200);
    const renewed = await gw.admin('POST', `/admin/v1/integrations/${WEBSITE}/keys/renew`);
    expect(renewed.statusCode, renewed.body).toBe(201);
    events = await outbox();
    expect(events.map((e) => e.type)).toEqual(STATE_TYPES);
    expect(events.map((e) => e.endpoints)).toEqual(STATE_TYPES.map(() => [brightpath]));
    expect(events[1]!.body.data).toMatchObject({ forced: true });
    expect(events[2]!.body.data).toMatchObject({ reason: 'bot broke' });
    expect(events[3]!.body.data).toMatchObject({ revoked_keys: renewed.json<{ revoked_keys: number }>().revoked_keys });
    const deliveries = await gw.store.readOne((r) => r.webhooks.listDeliveries(brightpath, null, 10));
    expect(deliveries.map((d) => [d.status, d.attempts])).toEqual(STATE_TYPES.map(() => ['pending', 0]));
  });
});

describe('the outbox: a change that does not commit', () => {
  it('leaves no event when the state change is refused', async () => {
    const before = (await outbox()).length;
    // No v1 key yet: nothing to switch off; never switched off: nothing to roll back.
    expect(
      (await gw.admin('POST', `/admin/v1/integrations/${SMILE}/switch-off`, { force: true, reason: 'moved' }))
        .statusCode,
    ).toBe(409);
    expect((await gw.admin('POST', `/admin/v1/integrations/${SMILE}/rollback`, { reason: 'x' })).statusCode).toBe(409);
    expect((await outbox()).length).toBe(before);
  });

  it('leaves neither event nor delivery when the unit fails after writing them', async () => {
    const before = await outbox();
    const integration = gw.rules.current().findIntegration(SMILE)!;
    await expect(
      gw.store.transact(async (tx) => {
        const written = await writeEvent(
          tx,
          'integration.rolled_back',
          integration.workspace.id,
          {
            integration: { id: integration.id, handle: integration.handle, name: integration.name },
            workspace_id: integration.workspace.id,
            actor: 'test',
            reason: 'never committed',
          },
          new Date().toISOString(),
        );
        expect(written.endpointIds).toEqual([smile]);
        throw new Error('the change failed after its event was written');
      }),
    ).rejects.toThrow(/after its event/);
    expect(await outbox()).toEqual(before);
    expect(await gw.store.readOne((r) => r.webhooks.listDeliveries(smile, null, 10))).toEqual([]);
  });

  it('refuses data the catalogue does not list, so nothing else can be sent', async () => {
    const before = (await outbox()).length;
    await expect(
      gw.store.transact((tx) =>
        writeEvent(tx, 'ping', null, { endpoint_id: 'x', actor: 'test', key: 'lgv1_secret' } as never, 'now'),
      ),
    ).rejects.toThrow();
    expect((await outbox()).length).toBe(before);
  });
});
