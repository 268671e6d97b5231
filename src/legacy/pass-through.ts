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

/** Sends the request on unchanged (method, path, query, body, the bot's key). */
export function forward(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return reply.from(request.url, {
    retriesCount: 0,
    onError: (r, { error }) => void sendUpstreamProblem(r as unknown as FastifyReply, error),
  });
}
