// Failed authentications per client address: key and admin-token guessing loops get 429 after the
// threshold, before any lookup, with a warn line; other addresses are unaffected.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startGateway, type Gateway } from '../helper.js';

let gw: Gateway;
let v1Key: string;
beforeAll(async () => {
  gw = await startGateway(); // the default: 30 failures a minute per address
  v1Key = await gw.issueKey('brightpath:telegram-bot');
  await gw.admin('POST', '/admin/v1/integrations/brightpath:telegram-bot/keys/import', {
    key: 'telegram-bot-legacy-key',
  });
});
afterAll(() => gw.close());

type Attempt = (secret: string, from: string) => Promise<{ statusCode: number; headers: Record<string, unknown> }>;

const v1: Attempt = (secret, from) =>
  gw.app.inject({
    method: 'POST',
    url: '/api/integrations/v1/leads/',
    remoteAddress: from,
    headers: { authorization: `Bearer ${secret}` },
    payload: { event_id: `e-${from}`, first_name: 'A' },
  });
const legacy: Attempt = (secret, from) =>
  gw.app.inject({
    method: 'GET',
    url: '/api/bots/api/boards/',
    remoteAddress: from,
    headers: { 'x-bot-api-key': secret },
  });
const admin: Attempt = (secret, from) =>
  gw.app.inject({
    method: 'GET',
    url: '/admin/v1/integrations',
    remoteAddress: from,
    headers: { authorization: `Bearer ${secret}` },
  });

/** Guesses from one address until it is refused; the statuses seen. */
async function guess(attempt: Attempt, from: string, times: number, prefix: string): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < times; i++)
    statuses.push((await attempt(`${prefix}${i.toString().padStart(6, '0')}`, from)).statusCode);
  return statuses;
}

const logLines = () =>
  readFileSync(join(gw.dir, 'gateway.log'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('failed authentications per address', () => {
  it.each([
    ['v1', v1, '10.0.0.1', 'lgv1_guess', (): string => v1Key, 201],
    ['legacy', legacy, '10.0.0.2', 'lgbot_guess', (): string => 'telegram-bot-legacy-key', 200],
    ['admin', admin, '10.0.0.3', 'lgadm_guess', (): string => ADMIN_TOKEN, 200],
  ] as const)(
    '%s: a guessing loop gets 429 after 30 failures, with one warn line; another address is unaffected',
    async (iface, attempt, from, prefix, right, ok) => {
      const statuses = await guess(attempt, from, 40, prefix);
      // 30 guesses reached the lookup (401); the other 10 were refused before it.
      expect(statuses.filter((s) => s === 401)).toHaveLength(30);
      expect(statuses.slice(30)).toEqual(Array(10).fill(429));
      const refused = await attempt(`${prefix}-more`, from);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);

      // The right secret from the throttled address waits for the window too: nothing is looked up there.
      expect((await attempt(right(), from)).statusCode).toBe(429);
      // From another address it works, and that success resets nothing for the throttled one.
      expect((await attempt(right(), '10.9.9.9')).statusCode).toBe(ok);
      expect((await attempt(right(), from)).statusCode).toBe(429);

      const warned = logLines().filter(
        (l) => l.msg === 'failed authentications from this address throttled' && l.client_address === from,
      );
      expect(warned).toHaveLength(1);
      expect(warned[0]).toMatchObject({ level: 40, interface: iface, failures: 30 });
      const log = readFileSync(join(gw.dir, 'gateway.log'), 'utf8');
      expect(log).not.toContain(prefix);
    },
  );

  it('counts failures of all three interfaces in one budget per address; a missing header is not a failure', async () => {
    const from = '10.0.0.4';
    for (let i = 0; i < 20; i++) expect((await v1('', from)).statusCode).toBe(401); // no credentials: not counted
    expect(await guess(v1, from, 10, 'lgv1_mix')).toEqual(Array(10).fill(401));
    expect(await guess(legacy, from, 10, 'lgbot_mix')).toEqual(Array(10).fill(401));
    expect(await guess(admin, from, 12, 'lgadm_mix')).toEqual([...Array(10).fill(401), 429, 429]);
    expect((await v1('lgv1_mix-after', from)).statusCode).toBe(429);
    expect((await legacy('lgbot_mix-after', from)).statusCode).toBe(429);
  });
});

describe('the address failures are counted under', () => {
  it('is the socket address, whatever X-Forwarded-For says, unless TRUST_PROXY names the proxy', async () => {
    const spoofed = (secret: string, forwardedFor: string) =>
      gw.app.inject({
        method: 'GET',
        url: '/api/bots/api/boards/',
        remoteAddress: '10.9.9.9',
        headers: { 'x-bot-api-key': secret, 'x-forwarded-for': forwardedFor },
      });
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++) statuses.push((await spoofed(`lgbot_spoof${i}`, `198.51.100.${i}`)).statusCode);
    // A new forwarded address on every guess bought nothing: the socket's budget ran out.
    expect(statuses.at(-1)).toBe(429);

    const behindProxy = await startGateway({ trustProxy: ['10.8.0.0/16'] });
    try {
      await behindProxy.admin('POST', '/admin/v1/integrations/brightpath:telegram-bot/keys/import', {
        key: 'proxied-legacy-key-0001',
      });
      const viaProxy = (secret: string, client: string) =>
        behindProxy.app.inject({
          method: 'GET',
          url: '/api/bots/api/boards/',
          remoteAddress: '10.8.0.2',
          headers: { 'x-bot-api-key': secret, 'x-forwarded-for': client },
        });
      const guesser: number[] = [];
      for (let i = 0; i < 31; i++) guesser.push((await viaProxy(`lgbot_guess${i}`, '203.0.113.7')).statusCode);
      expect(guesser.at(-1)).toBe(429);
      // Another client behind the same proxy is not locked out by the guesser.
      expect((await viaProxy('proxied-legacy-key-0001', '203.0.113.8')).statusCode).toBe(200);
    } finally {
      await behindProxy.close();
    }
  });

  it('groups IPv6 addresses by their /64', async () => {
    const from = (secret: string, address: string) =>
      gw.app.inject({
        method: 'GET',
        url: '/api/bots/api/boards/',
        remoteAddress: address,
        headers: { 'x-bot-api-key': secret },
      });
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++)
      statuses.push((await from(`lgbot_v6_${i}`, `2001:db8:5:6::${(i + 1).toString(16)}`)).statusCode);
    expect(statuses.at(-1)).toBe(429);
    expect((await from('telegram-bot-legacy-key', '2001:db8:5:6:ffff::1')).statusCode).toBe(429);
    expect((await from('telegram-bot-legacy-key', '2001:db8:5:7::1')).statusCode).toBe(200);
  });
});
