// Standard Webhooks signatures of outgoing events: secrets, the signature header, the request headers.
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { VERSION } from '../version.js';

/** The spec's prefix of a secret, which receivers' libraries strip before decoding the base64 key. */
export const SECRET_PREFIX = 'whsec_';
/** Random bytes in a new secret: the spec asks for 24 to 64; 32 is an HMAC-SHA256 block's worth of key. */
export const SECRET_BYTES = 32;
/** At most two secrets sign at once: the current one and, during a rotation's overlap, the next. */
export const MAX_SIGNING_SECRETS = 2;
/** Names the sender to receivers and their logs, as their firewalls and support desks see it. */
export const USER_AGENT = `lead-gateway/${VERSION}`;

/** A new endpoint secret: `whsec_` and the base64 of SECRET_BYTES random bytes. */
export function newSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

/** What one signed message is made of; the body is signed exactly as it is sent, byte for byte. */
export interface SignedMessage {
  /** `webhook-id`: the same for every attempt of one event, so that receivers can drop repeats. */
  id: string;
  /** `webhook-timestamp`: whole seconds since the epoch, of this attempt (receivers refuse old ones). */
  timestampSeconds: number;
  /** The JSON text sent as the request's body. */
  body: string;
}

/**
 * The `webhook-signature` value: `v1,<base64>` per secret, space-separated. With two secrets (a
 * rotation's overlap) a receiver holding either one verifies the message, as the spec provides.
 * The HMAC framing (`id.timestamp.body`) is the reference library's, not a copy of it.
 */
export function signatureHeader(secrets: readonly string[], message: SignedMessage): string {
  if (secrets.length === 0 || secrets.length > MAX_SIGNING_SECRETS) {
    throw new RangeError(`a message is signed with 1 to ${MAX_SIGNING_SECRETS} secrets, not ${secrets.length}`);
  }
  if (!Number.isSafeInteger(message.timestampSeconds) || message.timestampSeconds < 0) {
    throw new RangeError('the timestamp is whole seconds since the epoch');
  }
  const at = new Date(message.timestampSeconds * 1000);
  return secrets.map((secret) => new Webhook(secret).sign(message.id, at, message.body)).join(' ');
}

/** Every header of one attempt's request. */
export function webhookHeaders(secrets: readonly string[], message: SignedMessage): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'webhook-id': message.id,
    'webhook-timestamp': String(message.timestampSeconds),
    'webhook-signature': signatureHeader(secrets, message),
  };
}
