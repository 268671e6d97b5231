// One delivery attempt against a real receiver on 127.0.0.1 that verifies with the Standard Webhooks
// reference library: what it signs, what a failing, hanging, trickling, redirecting or flooding
// receiver makes of the attempt.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { BODY_HEAD_BYTES, createDeliverer, type Deliverer } from '../../src/webhooks/deliver.js';
import { newSecret } from '../../src/webhooks/signing.js';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';

const version = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
const current = newSecret();
const next = newSecret();
const now = () => Math.floor(Date.now() / 1000);
const message = (id: string, body: object = { type: 'lead.created', data: { id: 42 } }) => ({
  id,
  timestampSeconds: now(),
  body: JSON.stringify(body),
});
/** Plain http and the loopback address allowed for this receiver only, as an operator would for a test. */
const local = { allowHttpHosts: ['127.0.0.1'], allowAddresses: ['127.0.0.1'] };

let receiver: Receiver;
let deliverer: Deliverer;
beforeAll(async () => {
  receiver = await startReceiver([current, next]);
  deliverer = createDeliverer(local);
});
afterAll(async () => {
  await deliverer.close();
  await receiver.close();
});
const lastReceived = () => receiver.received.at(-1)!;

describe('a delivered webhook', () => {
  it('verifies with the reference library, and carries the Standard Webhooks headers and our user agent', async () => {
    const sent = message('msg_signed');
    const result = await deliverer.deliver(`${receiver.origin}/ok`, [current], sent);
    expect(result).toMatchObject({ ok: true, status: 204, bodyHead: '', error: null });
    const got = lastReceived();
    expect(got.verdicts).toEqual(['verified', 'No matching signature found']);
    expect(got.body).toBe(sent.body);
    expect(got.headers).toMatchObject({
      'content-type': 'application/json',
      'user-agent': `lead-gateway/${version}`,
      'webhook-id': 'msg_signed',
      'webhook-timestamp': String(sent.timestampSeconds),
    });
    expect(got.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
  });

  it('is refused by the verification when its body is altered, with another secret, or when it is old', async () => {
    await deliverer.deliver(`${receiver.origin}/ok`, [current], message('msg_tamper'));
    const { body, headers } = lastReceived();
    const verify = (secret: string, text: string, h: Record<string, string>) => () =>
      new Webhook(secret).verify(text, h);
    expect(verify(current, body, headers)).not.toThrow();
    expect(verify(current, body.replace('42', '43'), headers)).toThrow('No matching signature found');
    expect(verify(newSecret(), body, headers)).toThrow('No matching signature found');

    const old = { ...message('msg_old'), timestampSeconds: now() - 10 * 60 };
    const result = await deliverer.deliver(`${receiver.origin}/ok`, [current], old);
    expect(lastReceived().verdicts[0]).toBe('Message timestamp too old');
    expect(result).toMatchObject({ ok: false, status: 400, error: { code: 'http_status' } });
  });

  it('signed with two secrets during a rotation verifies with either one', async () => {
    await deliverer.deliver(`${receiver.origin}/ok`, [current, next], message('msg_rotation'));
    const got = lastReceived();
    expect(got.headers['webhook-signature']).toMatch(/^v1,\S+ v1,\S+$/);
    expect(got.verdicts).toEqual(['verified', 'verified']);
  });
});

describe('a failed attempt', () => {
  it('answered 500 is not ok, with the status and the head of the answer', async () => {
    const result = await deliverer.deliver(`${receiver.origin}/fail`, [current], message('msg_500'));
    expect(result).toMatchObject({
      ok: false,
      status: 500,
      bodyHead: 'database down',
      error: { code: 'http_status' },
    });
  });

  it('is never a throw: a closed port is a network error', async () => {
    const closed = await startReceiver();
    await closed.close();
    const result = await deliverer.deliver(`${closed.origin}/ok`, [current], message('msg_closed'));
    expect(result).toMatchObject({ ok: false, status: null, error: { code: 'network' } });
  });

  it('answered with a redirect is not followed: the target receives nothing', async () => {
    const before = receiver.received.length;
    const result = await deliverer.deliver(`${receiver.origin}/redirect`, [current], message('msg_redirect'));
    expect(result).toMatchObject({ ok: false, status: 307, error: { code: 'redirect' } });
    expect(receiver.received.slice(before).map((r) => r.path)).toEqual(['/redirect']);
  });
});

describe('the deadline of an attempt', () => {
  const timeoutMs = 1000;
  /** A margin a loaded machine needs, far below the 20 s a test gets: the bound cannot flake. */
  const marginMs = 5000;

  it('ends an attempt whose receiver never answers, once, within the timeout', async () => {
    const short = createDeliverer({ ...local, timeoutMs });
    try {
      const started = Date.now();
      const result = await short.deliver(`${receiver.origin}/hang`, [current], message('msg_hang'));
      expect(Date.now() - started).toBeLessThan(timeoutMs + marginMs);
      expect(result).toMatchObject({ ok: false, status: null, error: { code: 'timeout' } });
      expect(receiver.received.filter((r) => r.headers['webhook-id'] === 'msg_hang')).toHaveLength(1);
    } finally {
      receiver.releaseHung();
      await short.close();
    }
  });

  it('covers the whole answer: a receiver that trickles its body is cut at the timeout', async () => {
    const short = createDeliverer({ ...local, timeoutMs });
    try {
      const started = Date.now();
      const result = await short.deliver(`${receiver.origin}/trickle`, [current], message('msg_trickle'));
      expect(Date.now() - started).toBeLessThan(timeoutMs + marginMs);
      expect(result).toMatchObject({ ok: false, status: 200, error: { code: 'timeout' } });
      expect(result.bodyHead).toMatch(/^\.+$/);
    } finally {
      await short.close();
    }
  });

  it('holds up no other delivery, to the same receiver either', async () => {
    let hungDone = false;
    const hung = deliverer.deliver(`${receiver.origin}/hang`, [current], message('msg_held')).then((r) => {
      hungDone = true;
      return r;
    });
    await expect.poll(() => receiver.received.some((r) => r.headers['webhook-id'] === 'msg_held')).toBe(true);
    const healthy = await deliverer.deliver(`${receiver.origin}/ok`, [current], message('msg_beside'));
    expect(healthy).toMatchObject({ ok: true, status: 204 });
    expect(hungDone).toBe(false);
    receiver.releaseHung();
    expect(await hung).toMatchObject({ ok: true, status: 200, bodyHead: 'late' });
  });
});

describe('the answer', () => {
  it("with headers past the HTTP parser's 16 KiB is a failed attempt", async () => {
    const result = await deliverer.deliver(`${receiver.origin}/big-headers`, [current], message('msg_headers'));
    expect(result).toMatchObject({ ok: false, status: null, error: { code: 'network' } });
  });

  it('body of any size is read only to a bound, its head kept, the connection then closed', async () => {
    const result = await deliverer.deliver(`${receiver.origin}/huge`, [current], message('msg_huge'));
    expect(result).toMatchObject({ ok: true, status: 200, error: null });
    expect(result.bodyHead).toBe('x'.repeat(BODY_HEAD_BYTES));
    await receiver.huge.closed;
    // The body has no end: what was written is what the socket buffers took, nowhere near a flood.
    expect(receiver.huge.written).toBeLessThan(64 * 1024 * 1024);
  });
});
