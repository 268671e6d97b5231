// One structured log line per request, with the integration and what happened; secrets never logged.
import type { FastifyInstance } from 'fastify';
import pino, { type DestinationStream, type Logger } from 'pino';

declare module 'fastify' {
  interface FastifyRequest {
    /** The id (never the secret) of the key that authenticated the request. */
    apiKeyId: string | null;
  }
  interface FastifyReply {
    /** Members a route adds to its request's log line (event_id, outcome). */
    logContext: Record<string, unknown> | null;
  }
}

/** Paths of anything secret that could reach a log line. */
const redactPaths = [
  'req.headers.authorization',
  'req.headers["x-bot-api-key"]',
  'headers.authorization',
  'headers["x-bot-api-key"]',
  'key',
  'secret',
];

/** The gateway's logger: pino JSON, secrets redacted wherever they could appear. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino({ level, redact: { paths: redactPaths, censor: '[redacted]' } }, destination);
}

export function registerRequestLogging(app: FastifyInstance): void {
  app.decorateRequest('integration', null);
  app.decorateRequest('apiKeyId', null);
  app.decorateRequest('adminActor', null);
  app.decorateReply('logContext', null);
  app.addHook('onResponse', async (request, reply) => {
    request.log.info(
      {
        route: request.routeOptions.url ?? null,
        method: request.method,
        status: reply.statusCode,
        integration: request.integration?.handle ?? null,
        ...reply.logContext,
        duration_ms: Math.round(reply.elapsedTime * 100) / 100,
      },
      'request completed',
    );
  });
}
