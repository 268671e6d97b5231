// One delivery attempt of a signed webhook: the URL policy, the address actually connected to
// checked, one deadline for the whole exchange, no redirects followed, a bounded read of the answer.
import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupFunction, Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Agent, buildConnector, request } from 'undici';
import { addressPolicy, type AddressPolicy, type AddressPolicyOptions } from './address-policy.js';
import { webhookHeaders, type SignedMessage } from './signing.js';

/** One attempt's deadline, from the start of the connection to the answer's last byte read. */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** Bytes of the answer's body kept (as text) for the delivery log. */
export const BODY_HEAD_BYTES = 1024;
/** Bytes of the answer's body read at most; past them the connection is closed, not drained. */
export const BODY_READ_MAX_BYTES = 16 * 1024;

export type DeliveryErrorCode =
  | 'url_refused' // the URL's scheme or address, before any connection
  | 'address_refused' // an address the host name resolved to, or the connection's peer
  | 'timeout' // no complete answer within the deadline
  | 'redirect' // a 3xx answer: not followed, the attempt failed
  | 'http_status' // an answer outside 2xx
  | 'network'; // the connection or TLS failed, or was cut

export interface DeliveryResult {
  /** A 2xx answer, read within the deadline. */
  ok: boolean;
  /** The answer's status, or null when none came. */
  status: number | null;
  durationMs: number;
  /** The first BODY_HEAD_BYTES of the answer's body as UTF-8, as the receiver wrote it (untrusted text). */
  bodyHead: string;
  /** Why the attempt failed; null exactly when `ok`. */
  error: { code: DeliveryErrorCode; message: string } | null;
}

/** An address name resolution answered: the shape of `dns.lookup(…, { all: true })`. */
export interface ResolvedAddress {
  address: string;
  family: number;
}

export type Resolve = (hostname: string) => Promise<ResolvedAddress[]>;

export interface DelivererOptions extends AddressPolicyOptions {
  timeoutMs?: number;
  /** Resolves a host name to its addresses; `dns.lookup` unless given (tests give a fixed map). */
  resolve?: Resolve;
}

export interface Deliverer {
  /** One attempt: never throws for anything the network or the receiver does. */
  deliver(url: string, secrets: readonly string[], message: SignedMessage): Promise<DeliveryResult>;
  /** Waits for the attempts in flight, then closes the connections. */
  close(): Promise<void>;
  /** Ends the attempts in flight at once (each answers a `network` failure) and closes the connections. */
  destroy(): Promise<void>;
}

/** Raised inside the connection when an address is refused, recognised by deliver in what undici throws. */
class AddressRefusedError extends Error {
  override readonly name = 'AddressRefusedError';
  readonly code = 'ERR_WEBHOOK_ADDRESS_REFUSED';
}

const defaultResolve = (hostname: string) => dnsLookup(hostname, { all: true });

/** What net.connect's lookup calls back with: one address, or all of them when asked for `all`. */
type LookupCallback = (error: unknown, address?: string | ResolvedAddress[], family?: number) => void;

/**
 * The lookup the connections use: the name resolved, and the connection refused when any of its
 * addresses is refused (a name that mixes a public and a private address is not a public name).
 */
function guardedLookup(resolve: Resolve, policy: AddressPolicy): LookupFunction {
  const lookup = (hostname: string, options: { all?: boolean; family?: number }, callback: LookupCallback) => {
    resolve(hostname).then(
      (resolved) => {
        const family = options.family === 4 || options.family === 6 ? options.family : 0;
        const addresses = resolved.filter((a) => family === 0 || a.family === family);
        const refused = addresses.find((a) => !policy.permits(a.address));
        if (refused)
          return callback(new AddressRefusedError(`${hostname} resolves to ${refused.address}, not allowed`));
        const first = addresses[0];
        if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }));
        if (options.all) callback(null, addresses);
        else callback(null, first.address, first.family);
      },
      (error: unknown) => callback(error),
    );
  };
  // Node's type lists the overloads of dns.lookup; this one serves both forms net.connect uses.
  return lookup as unknown as LookupFunction;
}

/**
 * One pool of connections for every endpoint. Its connector resolves names itself and refuses the
 * connection when any address of the name is refused, so that a name pointing into the gateway's
 * network (or changing to do so between two checks) is never connected to; the peer of the socket
 * is checked again once connected, whatever way it was reached.
 */
export function createDeliverer(options: DelivererOptions = {}): Deliverer {
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  const policy = addressPolicy(options);
  const resolve = options.resolve ?? defaultResolve;

  const lookup = guardedLookup(resolve, policy);

  const connectVia = buildConnector({ timeout: timeoutMs, lookup });
  const agent = new Agent({
    connect(connectOptions, callback) {
      connectVia(connectOptions, (error, socket) => {
        if (error !== null) return callback(error, null);
        const peer = (socket as Socket).remoteAddress;
        if (peer !== undefined && policy.permits(peer)) return callback(null, socket);
        socket.destroy();
        callback(new AddressRefusedError(`connected to ${peer ?? 'an unknown address'}, not allowed`), null);
      });
    },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });

  return {
    deliver: (url, secrets, message) => attempt(agent, policy, timeoutMs, url, secrets, message),
    close: () => agent.close(),
    destroy: () => agent.destroy(),
  };
}

async function attempt(
  agent: Agent,
  policy: AddressPolicy,
  timeoutMs: number,
  url: string,
  secrets: readonly string[],
  message: SignedMessage,
): Promise<DeliveryResult> {
  const started = performance.now();
  const result = (status: number | null, bodyHead: string, error: DeliveryResult['error']): DeliveryResult => ({
    ok: error === null,
    status,
    durationMs: Math.round(performance.now() - started),
    bodyHead,
    error,
  });

  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return result(null, '', { code: 'url_refused', message: 'not a URL' });
  }
  const refusal = policy.refuseUrl(target);
  if (refusal !== null) return result(null, '', { code: 'url_refused', message: refusal });

  // One deadline for the whole exchange: undici's own timeouts are per phase and restart with every
  // chunk, so a receiver trickling a byte at a time would hold the attempt for ever without it.
  const headers = webhookHeaders(secrets, message);
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), timeoutMs);
  let status: number | null = null;
  let head = Buffer.alloc(0);
  try {
    const answer = await request(target, {
      dispatcher: agent,
      method: 'POST',
      headers,
      body: message.body,
      signal: deadline.signal,
    });
    status = answer.statusCode;
    let read = 0;
    for await (const chunk of answer.body as AsyncIterable<Buffer>) {
      read += chunk.length;
      if (head.length < BODY_HEAD_BYTES) head = Buffer.concat([head, chunk.subarray(0, BODY_HEAD_BYTES - head.length)]);
      if (read >= BODY_READ_MAX_BYTES) {
        // Closing the connection is cheaper than reading an answer of any size to keep it.
        answer.body.destroy();
        break;
      }
    }
    const bodyHead = head.toString('utf8');
    if (status >= 200 && status < 300) return result(status, bodyHead, null);
    if (status >= 300 && status < 400) {
      const location = String(answer.headers.location ?? '').slice(0, 256);
      return result(status, bodyHead, { code: 'redirect', message: `redirect to ${location} not followed` });
    }
    return result(status, bodyHead, { code: 'http_status', message: `answered ${status}` });
  } catch (error) {
    const bodyHead = head.toString('utf8');
    if (deadline.signal.aborted) {
      return result(status, bodyHead, { code: 'timeout', message: `no complete answer within ${timeoutMs} ms` });
    }
    const refused = causes(error).find((e) => e instanceof AddressRefusedError);
    if (refused) return result(status, bodyHead, { code: 'address_refused', message: refused.message });
    return result(status, bodyHead, { code: 'network', message: describe(error) });
  } finally {
    clearTimeout(timer);
  }
}

/** An error and its chain of causes, as undici wraps what the socket raised. */
function causes(error: unknown): Error[] {
  const chain: Error[] = [];
  for (let e = error; e instanceof Error && chain.length < 8; e = e.cause) chain.push(e);
  return chain;
}

function describe(error: unknown): string {
  const chain = causes(error);
  const text = chain.map((e) => ('code' in e && e.code ? `${e.message} (${String(e.code)})` : e.message));
  return text.join(': ') || String(error);
}
