// The HTTP server's own limits and refusals: timeouts, the connection cap, and a problem body for
// everything Node or Fastify refuses before a route runs (parse errors, timeouts, bad URLs, CONNECT).
import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ConnectionLimits } from '../config.js';
import { problemBody, problemCatalogue, sendProblem, type ProblemCode } from '../errors.js';

/** A client's X-Request-Id is kept when it is short and plain (it reaches logs and problem bodies); otherwise the gateway makes one. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** Node's own default, made explicit: a bigger header block is refused with 431. */
export const MAX_HEADER_BYTES = 16_384;

/** Ids by raw request, so a refusal written on the socket names the id the request was logged with. */
const requestIds = new WeakMap<IncomingMessage, string>();

/** Fastify's genReqId: the client's id when plain, else a fresh one; the same for one request. */
export function requestIdFor(req: IncomingMessage): string {
  let id = requestIds.get(req);
  if (id === undefined) {
    const given = req.headers['x-request-id'];
    id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    requestIds.set(req, id);
  }
  return id;
}

/**
 * How often Node looks for connections past the headers or request timeout. Node's default (30 s)
 * would let a slow client outstay its timeout by up to that much; a tenth of the headers timeout,
 * at most 1 s, keeps the cut-off within 10% of the configured time at the cost of a walk over the
 * open connections.
 */
export const checkIntervalMs = (limits: ConnectionLimits): number =>
  Math.max(50, Math.min(1_000, Math.floor(limits.headersTimeoutMs / 10)));

/** Options for Fastify() and, through `http`, for Node's http.createServer. */
export function serverOptions(limits: ConnectionLimits) {
  return {
    // Fastify sets these on the server after creating it; Node checks headersTimeout <= requestTimeout
    // at creation, so both also go to createServer.
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    http: {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: checkIntervalMs(limits),
      maxHeaderSize: MAX_HEADER_BYTES,
    },
    // Requests that arrive while the server drains are answered by app.ts with a problem.
    return503OnClosing: false,
    genReqId: requestIdFor,
    clientErrorHandler(this: FastifyInstance, error: Error & { code?: string }, socket: Duplex) {
      refuseConnection(this, limits, error, socket);
    },
    frameworkErrors: refuseUrl,
  };
}

/** The connection cap, and a problem for CONNECT, which Node would otherwise hang up on silently. */
export function guardConnections(app: FastifyInstance, limits: ConnectionLimits): void {
  app.server.maxConnections = limits.maxConnections;
  app.server.on('drop', (data?: { remoteAddress?: string }) => {
    // Node closes the socket before any byte is read: there is no request to answer.
    app.log.warn(
      {
        reason: 'connection-limit',
        remote_address: data?.remoteAddress ?? null,
        max_connections: limits.maxConnections,
      },
      'client refused',
    );
  });
  app.server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    const id = requestIdFor(req);
    app.log.warn(
      { request_id: id, reason: 'connect-method', remote_address: req.socket.remoteAddress ?? null },
      'client refused',
    );
    socket.on('error', () => {});
    socket.end(rawProblem('method-not-allowed', 'CONNECT is not allowed: this is not a proxy.', id, req.url));
  });
}

/** What a socket-level error means for the client, and what it is told. */
function classify(
  error: Error & { code?: string },
  socket: Duplex,
  inFlight: boolean,
  limits: ConnectionLimits,
): { reason: string; code: ProblemCode; detail: string } {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      // Node reports both timeouts with one code: a request with its headers parsed has a response.
      if (inFlight)
        return {
          reason: 'request-timeout',
          code: 'request-timeout',
          detail: `The request was not received in full within ${limits.requestTimeoutMs} ms.`,
        };
      return {
        reason: (socket as { bytesRead?: number }).bytesRead === 0 ? 'idle' : 'headers-timeout',
        code: 'request-timeout',
        detail: `The request headers were not received within ${limits.headersTimeoutMs} ms.`,
      };
    case 'HPE_HEADER_OVERFLOW':
      return {
        reason: 'headers-too-large',
        code: 'headers-too-large',
        detail: `The request headers are larger than ${MAX_HEADER_BYTES} bytes.`,
      };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return {
        reason: 'chunk-extensions-too-large',
        code: 'payload-too-large',
        detail: 'The chunk extensions of the body are too large.',
      };
    default:
      return { reason: 'malformed-request', code: 'bad-request', detail: 'The request is not valid HTTP/1.1.' };
  }
}

const ANSWERED = Symbol('answered before its body arrived');

/**
 * Whether the request now on this socket was answered while its body was still arriving (app.ts);
 * cleared when the next request on the connection begins.
 */
export function setAnswered(socket: Duplex, answered: boolean): void {
  (socket as { [ANSWERED]?: boolean })[ANSWERED] = answered;
}

/** Fastify's clientErrorHandler: a warn line, a problem when the socket can still take one, then close. */
function refuseConnection(
  app: FastifyInstance,
  limits: ConnectionLimits,
  error: Error & { code?: string },
  socket: Duplex,
): void {
  // The client went away (or Node already closed the socket): there is no one to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const response = (socket as { _httpMessage?: ServerResponse | null })._httpMessage ?? null;
  const { reason, code, detail } = classify(error, socket, response !== null, limits);
  const id = response ? requestIdFor(response.req) : randomUUID();
  app.log.warn(
    {
      request_id: id,
      reason,
      remote_address: (socket as { remoteAddress?: string }).remoteAddress ?? null,
      error_code: error.code ?? null,
    },
    'client refused',
  );
  // A response already under way, or already given to the request still sending its body, cannot be
  // followed by another on the same connection.
  const answered = (socket as { [ANSWERED]?: boolean })[ANSWERED] === true;
  if (socket.writable && response?.headersSent !== true && !answered)
    socket.write(rawProblem(code, detail, id, response?.req.url));
  socket.destroy();
}

/** Fastify's frameworkErrors: a URL the router cannot decode, or a path parameter over its length. */
function refuseUrl(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  // These replies skip the hooks, so the request id header and the log line are set here.
  reply.header('x-request-id', request.id);
  const detail =
    error.code === 'FST_ERR_BAD_URL'
      ? 'The URL has an invalid percent-encoding.'
      : error.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? 'A path segment is longer than 100 characters.'
        : null;
  if (detail === null) {
    request.log.error({ err: error }, 'unhandled error');
    void sendProblem(reply, 'internal', `Internal error; quote request id ${request.id} when reporting it.`);
    return;
  }
  request.log.info({ method: request.method, status: 400, error_code: error.code }, 'request refused');
  void sendProblem(reply, 'bad-request', detail);
}

/** A whole HTTP/1.1 response carrying a problem, for a socket with no Fastify reply around it. */
function rawProblem(code: ProblemCode, detail: string, requestId: string, url?: string): string {
  const { status } = problemCatalogue[code];
  const body = JSON.stringify(problemBody(code, detail, requestId, url));
  return [
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
    'Content-Type: application/problem+json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${requestId}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}
