// The sender (docs/webhooks.md, "Delivery"): events of real changes reach a real receiver on 127.0.0.1,
// signed; failures are retried with the same webhook-id until delivered or given up; a hanging
// receiver holds up no other endpoint; a change that did not commit sends nothing; an endpoint that
// failed throughout is disabled; a paused one waits; two gateways on one database send each event once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { ADMIN_TOKEN, startGateway, type Gateway, type WebhookTestConfig } from '../helper.js';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';
import { onEachEngineTwice } from '../support/twin-gateways.js';
import { SENDS_PER_ENDPOINT_MAX } from '../../src/webhooks/sender.js';

const BASE = '/admin/v1/webhooks/endpoints';
const WEBSITE = 'brightpath:website-form';
const TIMEOUT_MS = 1_500;
const ATTEMPTS = 4;

/** A short schedule: 50 ms between attempts, given up after the fourth. */
const webhooks: WebhookTestConfig = {
  webhookSendEveryMs: 50,
  webhookAllowHttpHosts: ['127.0.0.1'],
  webhookAllowAddresses: ['127.0.0.1'],
  webhookSender: {
    timeoutMs: TIMEOUT_MS,
    backoff: (n, now) => (n >= ATTEMPTS ? null : new Date(now.getTime() + 50)),
  },
};

interface Delivery {
  id: string;
  event_id: string;
  status: string;
  attempts: number;
  attempt_log: { status_code: number | null; duration_ms: number; error: string | null }[];
}

async function until<T>(what: string, read: () => Promise<T> | T, ok: (v: T) => boolean, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let receiver: Receiver;
let gw: Gateway;
beforeAll(async () => {
  receiver = await startReceiver();
  gw = await startGateway({ webhooks });
});
afterAll(async () => {
  receiver.releaseHung();
  await gw.close();
  await receiver.close();
});

const at = (path: string) => receiver.received.filter((r) => r.path === path);

async function subscribe(path: string, eventTypes = ['integration.key_issued']) {
  const res = await gw.admin('POST', BASE, { url: `${receiver.origin}${path}`, event_types: eventTypes });
  expect(res.statusCode, res.body).toBe(201);
  const { id, secret } = res.json<{ id: string; secret: string }>();
  return { id, secret };
}
const pause = (id: string, paused = true) =>
  gw.app.inject({
    method: 'PATCH',
    url: `${BASE}/${id}`,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    payload: { paused },
  });
/** One series' value from GET /metrics; null when absent. */
async function metric(series: string): Promise<number | null> {
  const text = (await gw.app.inject({ method: 'GET', url: '/metrics' })).body;
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? null : Number(line.slice(series.length + 1));
}
const pendingRows = async () =>
  (await gw.inspect.dump('webhook_deliveries')).filter((row) => row.map(String).includes('pending')).length;

const deliveries = async (id: string) =>
  (await gw.admin('GET', `${BASE}/${id}/deliveries`)).json<{ items: Delivery[] }>().items;

describe('an event of a real change', () => {
  it('arrives signed, verifies with standardwebhooks, and is logged delivered with its status and duration', async () => {
    const endpoint = await subscribe('/issued');
    const issuedAt = Date.now();
    await gw.issueKey(WEBSITE);
    const [got] = await until(
      'the event received',
      () => at('/issued'),
      (r) => r.length === 1,
    );
    const event = new Webhook(endpoint.secret).verify(got!.body, got!.headers) as { type: string; data: unknown };
    expect(event).toMatchObject({ type: 'integration.key_issued', data: { integration: { handle: WEBSITE } } });
    const stored = await gw.store.readOne((r) => r.webhooks.getEvent(got!.headers['webhook-id']!));
    expect(got!.body).toBe(stored!.payload);
    // The attempt's own time, in seconds.
    const stamp = Number(got!.headers['webhook-timestamp']) * 1000;
    expect(stamp).toBeGreaterThanOrEqual(Math.floor(issuedAt / 1000) * 1000);
    expect(stamp).toBeLessThanOrEqual(Date.now());

    const [delivery] = await until(
      'the delivery settled',
      () => deliveries(endpoint.id),
      (d) => d[0]?.status !== 'pending',
    );
    expect(delivery).toMatchObject({ event_id: stored!.id, status: 'delivered', attempts: 1 });
    expect(delivery!.attempt_log).toEqual([
      expect.objectContaining({ status_code: 200, error: null, duration_ms: expect.any(Number) }),
    ]);
    // Counted once the outcome is recorded, a moment after the log shows it.
    await until(
      'counted',
      () => metric('lead_gateway_webhook_deliveries_total{result="delivered"}'),
      (v) => v === 1,
    );
    expect(await metric('lead_gateway_webhook_pending_deliveries')).toBe(await pendingRows());
    expect(await metric('lead_gateway_webhook_oldest_pending_seconds')).toBe(0);
    await pause(endpoint.id);
  });
});

describe('retries', () => {
  it('sends again with the same webhook-id until the receiver answers 2xx: failed three times, delivered at the fourth', async () => {
    const endpoint = await subscribe('/fail-times/3');
    await gw.issueKey(WEBSITE);
    const [delivery] = await until(
      'delivered',
      () => deliveries(endpoint.id),
      (d) => d[0]?.status === 'delivered',
    );
    const got = at('/fail-times/3');
    expect(got).toHaveLength(4);
    expect(new Set(got.map((r) => r.headers['webhook-id']))).toEqual(new Set([delivery!.event_id]));
    expect(delivery!.attempts).toBe(4);
    expect(delivery!.attempt_log.map((a) => a.status_code)).toEqual([200, 500, 500, 500]);
    await pause(endpoint.id);
  });

  it('gives a delivery up when the schedule ends, and disables the endpoint that never succeeded, audited', async () => {
    const endpoint = await subscribe('/fail');
    await gw.issueKey(WEBSITE);
    const [delivery] = await until(
      'given up',
      () => deliveries(endpoint.id),
      (d) => d[0]?.status === 'failed',
    );
    expect(delivery!.attempts).toBe(ATTEMPTS);
    expect(at('/fail')).toHaveLength(ATTEMPTS);
    await until(
      'counted',
      () => metric('lead_gateway_webhook_deliveries_total{result="failed"}'),
      (v) => v === 1,
    );
    // The three retries of the test before and those of this one.
    expect(await metric('lead_gateway_webhook_deliveries_total{result="retry"}')).toBe(3 + (ATTEMPTS - 1));
    const shown = (await gw.admin('GET', `${BASE}/${endpoint.id}`)).json<{
      disabled_at: string | null;
      disabled_reason: string | null;
    }>();
    expect(shown.disabled_at).not.toBeNull();
    expect(shown.disabled_reason).toContain(delivery!.event_id);
    const audit = (await gw.admin('GET', '/admin/v1/audit?limit=200')).json<{
      items: { integration_id: string; action: string; actor: string }[];
    }>();
    expect(
      audit.items.filter((e) => e.integration_id === endpoint.id && e.action === 'webhook_endpoint_disabled'),
    ).toEqual([expect.objectContaining({ actor: 'webhooks' })]);
    // Disabled: a new event writes no delivery for it, until it is enabled again.
    await gw.issueKey(WEBSITE);
    expect(await deliveries(endpoint.id)).toHaveLength(1);
    const enabled = await gw.app.inject({
      method: 'PATCH',
      url: `${BASE}/${endpoint.id}`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { enabled: true },
    });
    expect(enabled.json()).toMatchObject({ disabled_at: null, disabled_reason: null });
    await gw.issueKey(WEBSITE);
    await until(
      'sent again once enabled',
      () => at('/fail'),
      (r) => r.length > ATTEMPTS,
    );
    await pause(endpoint.id);
  });

  it('keeps the endpoint enabled when a delivery is given up but another to it succeeded since', async () => {
    const endpoint = await subscribe('/fail-but-ping');
    await gw.issueKey(WEBSITE);
    const ping = (await gw.admin('POST', `${BASE}/${endpoint.id}/ping`)).json<{ event_id: string }>();
    const settled = await until(
      'both settled',
      () => deliveries(endpoint.id),
      (d) => d.length === 2 && d.every((x) => x.status !== 'pending'),
    );
    expect(settled.map((d) => [d.event_id === ping.event_id, d.status])).toEqual([
      [true, 'delivered'],
      [false, 'failed'],
    ]);
    expect((await gw.admin('GET', `${BASE}/${endpoint.id}`)).json()).toMatchObject({ disabled_at: null });
    await pause(endpoint.id);
  });
});

describe('a receiver that hangs', () => {
  it('costs one timeout per attempt, at most the per-endpoint cap at once, while another endpoint is delivered', async () => {
    const hung = await subscribe('/hang');
    const other = await subscribe('/meanwhile');
    // Six events due at once for each endpoint: both resumed after the changes.
    await pause(hung.id);
    await pause(other.id);
    for (let i = 0; i < 6; i++) await gw.issueKey(WEBSITE);
    await pause(hung.id, false);
    await pause(other.id, false);
    await until(
      'the other endpoint served, the hung one holding its cap',
      () => [at('/meanwhile').length, at('/hang').length],
      ([served, held]) => served === 6 && held === SENDS_PER_ENDPOINT_MAX,
    );
    // Every event reached the other endpoint while no hung attempt had ended.
    expect((await deliveries(hung.id)).map((d) => d.attempts)).toEqual([0, 0, 0, 0, 0, 0]);
    await sleep(200);
    expect(at('/hang')).toHaveLength(SENDS_PER_ENDPOINT_MAX);

    const timedOut = await until(
      'hung attempts timed out',
      async () => (await deliveries(hung.id)).flatMap((d) => d.attempt_log),
      (a) => a.length >= SENDS_PER_ENDPOINT_MAX,
    );
    for (const attempt of timedOut) {
      expect(attempt.error).toMatch(/^timeout/);
      expect(attempt.duration_ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
      expect(attempt.duration_ms).toBeLessThan(TIMEOUT_MS + 1_000);
    }
    await pause(hung.id);
    await pause(other.id);
    receiver.releaseHung();
  });
});

describe('what is not sent', () => {
  it('sends nothing for a change refused with 409', async () => {
    const endpoint = await subscribe('/refused', ['integration.switched_off', 'integration.rolled_back']);
    const off = await gw.admin('POST', '/admin/v1/integrations/brightpath:telegram-bot/switch-off', {
      force: true,
      reason: 'moved',
    });
    expect(off.statusCode, off.body).toBe(409);
    const back = await gw.admin('POST', '/admin/v1/integrations/brightpath:telegram-bot/rollback', { reason: 'x' });
    expect(back.statusCode, back.body).toBe(409);
    // A ping written after them is delivered; nothing else is, even some looks later.
    const ping = (await gw.admin('POST', `${BASE}/${endpoint.id}/ping`)).json<{ event_id: string }>();
    await until(
      'the ping received',
      () => at('/refused'),
      (r) => r.length >= 1,
    );
    await sleep(300);
    expect(at('/refused').map((r) => r.headers['webhook-id'])).toEqual([ping.event_id]);
    await pause(endpoint.id);
  });

  it('sends a paused endpoint nothing until it is resumed, then sends it what waited', async () => {
    const endpoint = await subscribe('/paused');
    expect((await pause(endpoint.id)).statusCode).toBe(200);
    await gw.issueKey(WEBSITE);
    await sleep(400);
    expect(at('/paused')).toHaveLength(0);
    expect((await deliveries(endpoint.id)).map((d) => [d.status, d.attempts])).toEqual([['pending', 0]]);
    // The backlog: what waits here (and what earlier tests' paused endpoints hold), the oldest of it aged.
    await sleep(1_100);
    expect(await metric('lead_gateway_webhook_pending_deliveries')).toBe(await pendingRows());
    expect(await metric('lead_gateway_webhook_oldest_pending_seconds')).toBeGreaterThanOrEqual(1);
    expect((await pause(endpoint.id, false)).statusCode).toBe(200);
    await until(
      'sent once resumed',
      () => at('/paused'),
      (r) => r.length === 1,
    );
    await pause(endpoint.id);
  });
});

onEachEngineTwice(
  (_engine, twins) => {
    describe('two gateways on one database', () => {
      let twinReceiver: Receiver;
      beforeAll(async () => void (twinReceiver = await startReceiver()));
      afterAll(() => twinReceiver.close());

      it('deliver each event once between them', async () => {
        const t = twins();
        if (!t) return;
        await Promise.all(t.apps.map((app) => app.ready()));
        const created = await t.admin(0, 'POST', BASE, {
          url: `${twinReceiver.origin}/twins`,
          event_types: ['integration.key_issued'],
        });
        expect(created.statusCode, created.body).toBe(201);
        const N = 12;
        for (let i = 0; i < N; i++) {
          const res = await t.admin(i, 'POST', `/admin/v1/integrations/${WEBSITE}/keys`);
          expect(res.statusCode, res.body).toBe(201);
        }
        await until(
          'every event received',
          () => twinReceiver.received,
          (r) => r.length >= N,
        );
        await sleep(500);
        const ids = twinReceiver.received.map((r) => r.headers['webhook-id']);
        expect(ids).toHaveLength(N);
        expect(new Set(ids).size).toBe(N);
        const events = (await t.inspect.dump('webhook_events')).map((row) => String(row[0]));
        expect(new Set(ids)).toEqual(new Set(events));
      });
    });
  },
  undefined,
  () => webhooks,
);
