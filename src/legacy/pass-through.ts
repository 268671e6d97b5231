// Forwarding legacy reads and actions unchanged to the old API (docs/legacy-api.md, "Pass-through to the old API"), with bounded waits.
//
// On undici's own dispatch interface rather than @fastify/reply-from: that layer added CPU to every
// forward (bench/results/LOG.md, "Legacy pass-through"). The answer still goes out through
// Fastify's reply, so the hooks every legacy response runs (rate-limit headers, draining, logging,
// usage counting, metrics) run for it too.
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Pool, util, type Dispatcher } from 'undici';
import type { UpstreamConfig } from '../config.js';
import { sendUpstreamProblem } from '../errors.js';

/** Connections kept open to the upstream at most (what @fastify/reply-from kept before). */
export const UPSTREAM_CONNECTIONS = 128;

/**
 * An answer that declares at most this many bytes is sent on once whole, not streamed: a stream costs
 * a few microseconds more per answer, and a small answer that stalls half-way still gets its 504
 * problem. Anything longer, or of no declared length, is streamed as it comes.
 */
export const BUFFERED_ANSWER_MAX_BYTES = 64 * 1024;

/** RFC 9110 7.6.1: meaningful for one connection only, never passed on (undici refuses several). */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

type Headers = Record<string, string | string[] | undefined>;

/** Copies `headers` without the hop-by-hop ones, those that `Connection` names included. */
function withoutHopByHop(headers: Headers, into: Headers): Headers {
  const connection = headers.connection;
  const listed =
    typeof connection === 'string' ? new Set(connection.split(',').map((h) => h.trim().toLowerCase())) : null;
  for (const name in headers) {
    if (!HOP_BY_HOP.has(name) && (listed === null || !listed.has(name))) into[name] = headers[name];
  }
  return into;
}

/** The upstream's body, handed to Fastify to stream out: undici waits while the client reads slowly. */
class UpstreamBody extends Readable {
  resumeUpstream: (() => void) | null = null;
  abortUpstream: ((reason: Error) => void) | null = null;
  ended = false;

  override _read(): void {
    const resume = this.resumeUpstream;
    this.resumeUpstream = null;
    resume?.();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    // Fastify destroys the body when the client goes away mid-answer: the upstream stops sending too.
    if (!this.ended) this.abortUpstream?.(error ?? new Error('the client closed the connection'));
    callback(error);
  }
}

/** One forwarded request: undici's dispatch handler (the interface its HTTP/1 client calls directly). */
class Forwarding implements Dispatcher.DispatchHandler {
  private abort: ((reason: Error) => void) | null = null;
  private body: UpstreamBody | null = null;
  private clientGone = false;
  /** undici's callback (from onHeaders) that reads on after onData returned false. */
  private resume: (() => void) | null = null;
  /** A small answer of a declared length, kept whole until it has arrived (see BUFFERED_ANSWER_MAX_BYTES). */
  private held: { headers: Headers; chunks: Buffer[] } | null = null;

  constructor(private readonly reply: FastifyReply) {
    // A client that leaves before the answer cancels the upstream request (after it, see UpstreamBody).
    reply.raw.once('close', () => {
      if (this.body === null && !reply.sent) {
        this.clientGone = true;
        this.abort?.(new Error('the client closed the connection'));
      }
    });
  }

  onConnect(abort: (reason?: Error) => void): void {
    this.abort = abort;
    if (this.clientGone) abort(new Error('the client closed the connection'));
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void): boolean {
    if (this.clientGone) return false;
    const reply = this.reply;
    try {
      reply.code(statusCode);
    } catch (error) {
      // A status Node cannot send (e.g. 600): a broken answer, as for a reset.
      this.abort?.(error as Error);
      return false;
    }
    const headers = withoutHopByHop(util.parseHeaders(rawHeaders) as Headers, {});
    const length = Number(headers['content-length'] ?? NaN);
    // HEAD, 204 and 304 carry no body whatever their Content-Length says: streamed, as Fastify expects.
    if (
      length <= BUFFERED_ANSWER_MAX_BYTES &&
      statusCode !== 204 &&
      statusCode !== 304 &&
      this.reply.request.method !== 'HEAD'
    ) {
      this.held = { headers, chunks: [] };
      return true;
    }
    reply.headers(headers);
    const body = (this.body = new UpstreamBody());
    body.abortUpstream = this.abort;
    this.resume = resume;
    void reply.send(body);
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.held !== null) {
      this.held.chunks.push(chunk);
      return true;
    }
    const body = this.body!;
    if (body.push(chunk)) return true;
    // undici stops reading the socket until the client has taken what was pushed (_read).
    body.resumeUpstream = this.resume;
    return false;
  }

  onComplete(): void {
    const held = this.held;
    if (held !== null) {
      void this.reply
        .headers(held.headers)
        .send(held.chunks.length === 1 ? held.chunks[0] : Buffer.concat(held.chunks));
      return;
    }
    const body = this.body!;
    body.ended = true;
    body.push(null);
  }

  onError(error: Error): void {
    if (this.clientGone) return;
    const body = this.body;
    // After the status line went out there is no problem to send: the answer is cut off.
    if (body !== null) body.destroy(error);
    else void sendUpstreamProblem(this.reply, error);
  }
}

/**
 * One pool of kept connections to the upstream, with explicit limits: a connect timeout, a wait for
 * the answer's headers and between its body's chunks (undici's own default is 300 s), TLS certificates
 * verified. Nothing is ever re-sent by the gateway, whatever the method or answer: a retry is the
 * bot's decision (undici's core never retries). Returns the route handler that forwards.
 */
export function registerUpstream(
  app: FastifyInstance,
  upstream: UpstreamConfig,
): (request: FastifyRequest, reply: FastifyReply) => FastifyReply {
  const target = new URL(upstream.url);
  const pool = new Pool(target.origin, {
    connections: UPSTREAM_CONNECTIONS,
    pipelining: 1,
    connect: { timeout: upstream.connectTimeoutMs, rejectUnauthorized: true },
    headersTimeout: upstream.timeoutMs,
    bodyTimeout: upstream.timeoutMs,
  });
  app.addHook('onClose', async () => {
    await pool.close();
  });

  /** Sends the request on unchanged (method, path, query, body, the bot's key), plus our request id. */
  return function forward(request: FastifyRequest, reply: FastifyReply): FastifyReply {
    const headers = withoutHopByHop(request.headers, {});
    headers.host = target.host;
    headers['x-request-id'] = request.id;
    let body: string | Buffer | undefined;
    const parsed = request.body;
    if (parsed !== undefined && parsed !== null && request.method !== 'GET' && request.method !== 'HEAD') {
      // The JSON parser has read the body; it goes on as JSON (as @fastify/reply-from sent it).
      body = typeof parsed === 'string' || Buffer.isBuffer(parsed) ? parsed : JSON.stringify(parsed);
      headers['content-length'] = String(Buffer.byteLength(body));
    } else {
      delete headers['content-length'];
    }
    const forwarding = new Forwarding(reply);
    pool.dispatch(
      { origin: target.origin, path: request.url, method: request.method as Dispatcher.HttpMethod, headers, body },
      forwarding,
    );
    return reply;
  };
}
