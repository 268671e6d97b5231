// Forwarding legacy reads and actions unchanged to the old API (contract 7), with bounded waits.
import replyFrom from '@fastify/reply-from';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { UpstreamConfig } from '../config.js';
import { sendUpstreamProblem } from '../errors.js';

/**
 * Registers @fastify/reply-from on undici with explicit limits: its defaults would wait 300 s, not
 * verify TLS certificates, retry GETs on 503 and turn a refused connection into a 500 carrying the
 * upstream's error text. Nothing is ever re-sent by the gateway: a retry is the bot's decision.
 */
export async function registerUpstream(app: FastifyInstance, upstream: UpstreamConfig): Promise<void> {
  await app.register(replyFrom, {
    base: upstream.url,
    undici: {
      connect: { timeout: upstream.connectTimeoutMs, rejectUnauthorized: true },
      headersTimeout: upstream.timeoutMs,
      bodyTimeout: upstream.timeoutMs,
    },
    retryMethods: [],
    disableRequestLogging: true,
  });
}

/** RFC 9110 7.6.1: meaningful for one connection only, never passed on (undici refuses several). */
const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade'];

function withoutHopByHop<H extends Record<string, unknown>>(headers: H): H {
  const out: Record<string, unknown> = { ...headers };
  const listed = typeof headers.connection === 'string' ? headers.connection.split(',').map((h) => h.trim().toLowerCase()) : [];
  for (const name of [...HOP_BY_HOP, ...listed]) delete out[name];
  return out as H;
}

/** Sends the request on unchanged (method, path, query, body, the bot's key), plus our request id. */
export function forward(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return reply.from(request.url, {
    retriesCount: 0,
    rewriteRequestHeaders: (req, headers) => ({ ...withoutHopByHop(headers), 'x-request-id': req.id }),
    rewriteHeaders: (headers) => withoutHopByHop(headers),
    onError: (r, { error }) => void sendUpstreamProblem(r as unknown as FastifyReply, error),
  });
}
