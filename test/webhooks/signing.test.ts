// The Standard Webhooks signature of an outgoing event: its secrets, its framing, its headers.
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { SECRET_BYTES, USER_AGENT, newSecret, signatureHeader, webhookHeaders } from '../../src/webhooks/signing.js';

const message = { id: 'msg_2a1b', timestampSeconds: 1_767_225_600, body: '{"type":"lead.created","name":"Zoë"}' };

describe('a new secret', () => {
  it(`is whsec_ and the base64 of ${SECRET_BYTES} random bytes, a different one each time`, () => {
    const secrets = [newSecret(), newSecret()];
    for (const secret of secrets) {
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
      const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
      expect(key.length).toBeGreaterThanOrEqual(24);
      expect(key.length).toBe(SECRET_BYTES);
    }
    expect(secrets[0]).not.toBe(secrets[1]);
  });
});

describe('the signature', () => {
  it('is the base64 HMAC-SHA256 of "id.timestamp.body" under the decoded key, as the spec frames it', () => {
    const secret = newSecret();
    const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
    const expected = createHmac('sha256', key)
      .update(`${message.id}.${message.timestampSeconds}.${message.body}`)
      .digest('base64');
    expect(signatureHeader([secret], message)).toBe(`v1,${expected}`);
  });

  it('with two secrets holds one v1 signature per secret, space-separated, in their order', () => {
    const [a, b] = [newSecret(), newSecret()];
    const single = (s: string) => signatureHeader([s], message);
    expect(signatureHeader([a, b], message)).toBe(`${single(a)} ${single(b)}`);
  });

  it('is made with one or two secrets, no other number', () => {
    expect(() => signatureHeader([], message)).toThrow(RangeError);
    expect(() => signatureHeader([newSecret(), newSecret(), newSecret()], message)).toThrow(RangeError);
    expect(() => signatureHeader([newSecret()], { ...message, timestampSeconds: 1.5 })).toThrow(RangeError);
  });
});

describe('the headers', () => {
  it('are the three webhook-* headers, JSON, and a user agent naming the release; the reference library verifies them', () => {
    const secret = newSecret();
    const fresh = { ...message, timestampSeconds: Math.floor(Date.now() / 1000) };
    const headers = webhookHeaders([secret], fresh);
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(USER_AGENT).toBe(`lead-gateway/${version}`);
    expect(headers).toEqual({
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'webhook-id': fresh.id,
      'webhook-timestamp': String(fresh.timestampSeconds),
      'webhook-signature': signatureHeader([secret], fresh),
    });
    expect(new Webhook(secret).verify(fresh.body, headers)).toEqual(JSON.parse(fresh.body));
  });
});
