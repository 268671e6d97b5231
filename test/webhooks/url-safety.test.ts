// Where a webhook may go: https to public addresses, plain http and the gateway's own networks only
// where the operator allows them, checked on every address a name resolves to, before connecting.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressPolicy } from '../../src/webhooks/address-policy.js';
import { createDeliverer, type DelivererOptions, type ResolvedAddress } from '../../src/webhooks/deliver.js';
import { newSecret } from '../../src/webhooks/signing.js';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';

const secret = newSecret();
const message = { id: 'msg_ssrf', timestampSeconds: Math.floor(Date.now() / 1000), body: '{}' };

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver([secret]);
});
afterAll(async () => {
  await receiver.close();
});

/** A name resolution without the network: fixed answers, and every name asked for noted. */
function fixedResolver(names: Record<string, string[]>) {
  const asked: string[] = [];
  const resolve = async (hostname: string): Promise<ResolvedAddress[]> => {
    asked.push(hostname);
    const addresses = names[hostname];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return { asked, resolve };
}

/** One attempt with its own deliverer; the receiver's connection count says whether it connected. */
async function attempt(url: string, options: DelivererOptions) {
  const deliverer = createDeliverer(options);
  const connectionsBefore = receiver.connections;
  try {
    const result = await deliverer.deliver(url, [secret], message);
    return { result, connected: receiver.connections > connectionsBefore };
  } finally {
    await deliverer.close();
  }
}

describe('the URL of an endpoint', () => {
  it('over plain http is refused for a host not on the allow-list, without connecting', async () => {
    const { result, connected } = await attempt(`${receiver.origin}/ok`, { allowAddresses: ['127.0.0.1'] });
    expect(result).toMatchObject({ ok: false, status: null, error: { code: 'url_refused' } });
    expect(result.error!.message).toContain('plain http');
    expect(connected).toBe(false);
  });

  it('with a scheme other than http and https is refused', async () => {
    const { result } = await attempt('ftp://example.com/hook', {});
    expect(result.error).toMatchObject({ code: 'url_refused' });
  });

  it.each([
    '127.0.0.1',
    '10.0.0.1',
    '172.16.5.4',
    '192.168.1.10',
    '100.64.0.1',
    '169.254.169.254',
    '0.0.0.0',
    '[::1]',
    '[::]',
    '[fc00::1]',
    '[fd12:3456::1]',
    '[fe80::1]',
    '[::ffff:127.0.0.1]',
    '[::ffff:169.254.169.254]',
    '[::ffff:10.0.0.1]',
  ])('https to the address %s is refused without connecting or resolving', async (host) => {
    const names = fixedResolver({});
    const url = host === '127.0.0.1' ? `https://127.0.0.1:${receiver.port}/ok` : `https://${host}/ok`;
    const { result, connected } = await attempt(url, { resolve: names.resolve });
    expect(result).toMatchObject({ ok: false, status: null, error: { code: 'url_refused' } });
    expect(connected).toBe(false);
    expect(names.asked).toEqual([]);
  });
});

describe('a host name', () => {
  it('resolving to 127.0.0.1 is refused when that address is not allowed, however http is allowed', async () => {
    const names = fixedResolver({ 'hooks.example.test': ['127.0.0.1'] });
    const url = `http://hooks.example.test:${receiver.port}/ok`;
    const refused = await attempt(url, { allowHttpHosts: ['hooks.example.test'], resolve: names.resolve });
    expect(refused.result).toMatchObject({ ok: false, status: null, error: { code: 'address_refused' } });
    expect(refused.result.error!.message).toContain('127.0.0.1');
    expect(refused.connected).toBe(false);
    expect(names.asked).toEqual(['hooks.example.test']);

    // The same name, the address allowed: the resolution above is what was checked.
    const allowed = await attempt(url, {
      allowHttpHosts: ['hooks.example.test'],
      allowAddresses: ['127.0.0.0/8'],
      resolve: names.resolve,
    });
    expect(allowed.result).toMatchObject({ ok: true, status: 204 });
  });

  it('resolving to one public and one private address is refused', async () => {
    const names = fixedResolver({ 'mixed.example.test': ['203.0.113.7', '127.0.0.1'] });
    const { result, connected } = await attempt(`http://mixed.example.test:${receiver.port}/ok`, {
      allowHttpHosts: ['mixed.example.test'],
      resolve: names.resolve,
    });
    expect(result.error).toMatchObject({ code: 'address_refused' });
    expect(connected).toBe(false);
  });

  it('localhost, resolved by the system, is refused when loopback is not allowed', async () => {
    const { result, connected } = await attempt(`http://localhost:${receiver.port}/ok`, {
      allowHttpHosts: ['localhost'],
    });
    expect(result).toMatchObject({ ok: false, status: null, error: { code: 'address_refused' } });
    expect(connected).toBe(false);
  });

  it('that does not resolve is a network error, not a throw', async () => {
    const names = fixedResolver({});
    const { result } = await attempt('https://nowhere.example.test/ok', { resolve: names.resolve });
    expect(result).toMatchObject({ ok: false, status: null, error: { code: 'network' } });
    expect(result.error!.message).toContain('ENOTFOUND');
  });
});

describe('the address policy', () => {
  const policy = addressPolicy({ allowAddresses: ['10.20.0.0/16', '::ffff:192.168.7.7'] });

  it.each([
    ['8.8.8.8', true],
    ['203.0.113.7', true],
    ['100.63.255.255', true],
    ['100.128.0.1', true],
    ['2606:4700:4700::1111', true],
    ['::ffff:8.8.8.8', true],
    ['10.20.3.4', true],
    ['::ffff:10.20.3.4', true],
    ['192.168.7.7', true],
    ['10.21.0.1', false],
    ['172.31.255.255', false],
    ['100.127.255.254', false],
    ['169.254.169.254', false],
    ['::ffff:a9fe:a9fe', false],
    ['224.0.0.1', false],
    ['255.255.255.255', false],
    ['64:ff9b::a00:1', false],
    ['fe80::1', false],
    ['fe80::1%eth0', false],
    ['ff02::1', false],
    ['not an address', false],
  ])('%s: permitted %s', (address, permitted) => {
    expect(policy.permits(address)).toBe(permitted);
  });

  it('refuses an allow-list entry that is neither an address nor a range', () => {
    expect(() => addressPolicy({ allowAddresses: ['10.0.0.0/33'] })).toThrow(RangeError);
    expect(() => addressPolicy({ allowAddresses: ['intranet'] })).toThrow(RangeError);
  });
});
