// The catalogue of problem types and the one handler that turns every error into RFC 9457 JSON.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { TEST_MODE_HEADER } from './test-mode.js';
import { BrokenReferenceError, StoreUnavailableError } from './store/store.js';
import type { StoreOutage } from './outage.js';

/** The body limit of a route that sets none of its own: the server's (app.ts). */
export const BODY_LIMIT_DEFAULT_BYTES = 1_048_576;

/** Stable problem codes: the `type` of a problem is `urn:lead-gateway:problem:<code>`. */
export const problemCatalogue = {
  'malformed-json': { status: 400, title: 'Malformed JSON body' },
  'bad-request': { status: 400, title: 'Bad request' },
  'nul-character': { status: 400, title: 'NUL character (U+0000) in the request' },
  'unpaired-surrogate': { status: 400, title: 'Unpaired UTF-16 surrogate in the request' },
  unauthorized: { status: 401, title: 'Authentication required' },
  forbidden: { status: 403, title: 'Forbidden' },
  brownout: { status: 403, title: 'The deprecated interface is off for a brownout window' },
  'not-found': { status: 404, title: 'Not found' },
  'method-not-allowed': { status: 405, title: 'Method not allowed' },
  'request-timeout': { status: 408, title: 'Request not received in time' },
  'event-id-conflict': { status: 409, title: 'event_id already used with different data' },
  conflict: { status: 409, title: 'Conflict' },
  'limit-reached': { status: 409, title: 'A cap on what is stored is reached' },
  'payload-too-large': { status: 413, title: 'Body too large' },
  'unsupported-media-type': { status: 415, title: 'Unsupported media type' },
  'validation-failed': { status: 422, title: 'Request body breaks the schema' },
  'nesting-too-deep': { status: 422, title: 'JSON nested too deeply' },
  'too-many-values': { status: 422, title: 'JSON body holds too many values' },
  'string-too-long': { status: 422, title: 'JSON string too long' },
  'rate-limited': { status: 429, title: 'Too many requests' },
  'headers-too-large': { status: 431, title: 'Request headers too large' },
  internal: { status: 500, title: 'Internal error' },
  'broken-reference': { status: 500, title: 'A stored row names a row the store does not hold' },
  'bad-gateway': { status: 502, title: 'Upstream unavailable' },
  'service-unavailable': { status: 503, title: 'Service unavailable' },
  'gateway-timeout': { status: 504, title: 'Upstream timed out' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ProblemCode = keyof typeof problemCatalogue;

export const PROBLEM_CODES = Object.keys(problemCatalogue) as [ProblemCode, ...ProblemCode[]];

export const problemType = (code: ProblemCode): string => `urn:lead-gateway:problem:${code}`;

export const FieldErrorSchema = z.object({
  path: z.string().meta({
    description: 'JSON Pointer (RFC 6901) into the request body: `""` is the body itself, `/stage` its member `stage`',
  }),
  message: z.string(),
});
export type FieldError = z.infer<typeof FieldErrorSchema>;

export const ProblemSchema = z
  .looseObject({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    instance: z.string().optional(),
    code: z
      .enum(PROBLEM_CODES)
      .meta({ description: 'Stable code of the problem type; `type` is urn:lead-gateway:problem:<code>' }),
    request_id: z.string(),
    errors: z.array(FieldErrorSchema).optional(),
  })
  .meta({
    id: 'Problem',
    description: 'RFC 9457 problem details',
    examples: [
      {
        type: 'urn:lead-gateway:problem:validation-failed',
        title: 'Request body breaks the schema',
        status: 422,
        detail: '/stage: stage is not sent by the integration: it comes from the integration settings in the service',
        instance: '/api/integrations/v1/leads/',
        code: 'validation-failed',
        request_id: '5f5c8618-ca6c-443a-9b0e-e3a8b1abe586',
        errors: [
          {
            path: '/stage',
            message: 'stage is not sent by the integration: it comes from the integration settings in the service',
          },
        ],
      },
    ],
  });
export type Problem = z.infer<typeof ProblemSchema>;

/** A typed error thrown by services and routes; the handler renders it. */
export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ProblemCode,
    detail: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
    this.name = 'AppError';
    this.status = problemCatalogue[code].status;
  }
}

export function buildProblem(
  request: FastifyRequest,
  code: ProblemCode,
  detail: string,
  extra: Record<string, unknown> = {},
): Problem {
  return problemBody(code, detail, request.id, request.url, extra);
}

/** The problem itself, also for refusals written on a bare socket before any request exists. */
export function problemBody(
  code: ProblemCode,
  detail: string,
  requestId: string,
  url?: string,
  extra: Record<string, unknown> = {},
): Problem {
  const { status, title } = problemCatalogue[code];
  return {
    type: problemType(code),
    title,
    status,
    detail,
    ...(url === undefined ? {} : { instance: url.split('?')[0] }),
    code,
    request_id: requestId,
    ...extra,
  };
}

export function sendProblem(
  reply: FastifyReply,
  code: ProblemCode,
  detail: string,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): FastifyReply {
  const problem = buildProblem(reply.request, code, detail, extra);
  return reply.code(problem.status).headers(headers).type('application/problem+json').send(problem);
}

const escapePointerToken = (key: string) => key.replaceAll('~', '~0').replaceAll('/', '~1');

/** A zod issue's path as a JSON Pointer (RFC 6901): `[]`, the body itself, is `""`; `['answers', 'a/b']` is `/answers/a~1b`. */
export const pointerOf = (path: readonly PropertyKey[]): string =>
  path.map((key) => `/${escapePointerToken(String(key))}`).join('');

/** A pointer in a problem's `detail`: the body itself, whose pointer is empty, is named. */
export const shownPointer = (pointer: string): string => (pointer === '' ? '(the body)' : pointer);

/** `path: message; ...`, the `detail` of a problem whose `errors` name members. */
export const detailOf = (errors: readonly FieldError[]): string =>
  errors.map((e) => `${shownPointer(e.path)}: ${e.message}`).join('; ');

/** Zod issues -> `{path, message}`, one entry per offending member (unknown keys named each). */
function fieldErrors(error: FastifyError): FieldError[] {
  const out: FieldError[] = [];
  for (const v of error.validation ?? []) {
    const params = (v.params ?? {}) as { keys?: unknown };
    // The type provider writes `/` + the keys joined by `/`: the body itself is `/`.
    const base = v.instancePath === '/' ? '' : v.instancePath;
    if (v.keyword === 'unrecognized_keys' && Array.isArray(params.keys)) {
      for (const key of params.keys)
        out.push({ path: `${base}/${escapePointerToken(String(key))}`, message: 'is not a field of this request' });
    } else {
      out.push({ path: base, message: v.message ?? 'is invalid' });
    }
  }
  return out;
}

/** Maps Fastify's own errors (body parsing, limits) to catalogue codes. */
function fastifyErrorCode(error: FastifyError): ProblemCode | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return 'malformed-json';
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return 'payload-too-large';
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' ? 'unsupported-media-type' : 'bad-request';
    case 'FST_STATIC_FORBIDDEN_PATH':
      // @fastify/static refuses a path that leaves its folder or is not canonical (.., NUL, \\):
      // nothing is served there, and a 404 tells a prober no more than that.
      return 'not-found';
    default:
      break;
  }
  if (error instanceof SyntaxError) return 'malformed-json';
  if (error.statusCode === 413) return 'payload-too-large';
  if (error.statusCode === 415) return 'unsupported-media-type';
  if (error.statusCode === 400) return 'bad-request';
  if (error.statusCode === 403) return 'forbidden';
  if (error.statusCode === 404) return 'not-found';
  return undefined;
}

const detailFor: Partial<Record<ProblemCode, string>> = {
  'malformed-json': 'The body is not valid JSON.',
  'unsupported-media-type': 'Send the body as JSON with Content-Type: application/json.',
  'not-found': 'Nothing is served at this path.',
};

const UPSTREAM_TIMEOUTS = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'FST_REPLY_FROM_GATEWAY_TIMEOUT',
]);

/**
 * The one place upstream transport failures become problems: a timeout is 504, anything else
 * (refused, reset, DNS, a broken response) is 502. The cause is logged, never sent: the bot sees
 * neither the upstream's address nor its error text.
 */
export function sendUpstreamProblem(
  reply: FastifyReply,
  error: Error & { code?: string; cause?: unknown },
): FastifyReply {
  const cause = (error.cause ?? error) as { code?: string };
  const timedOut =
    UPSTREAM_TIMEOUTS.has(cause.code ?? '') ||
    UPSTREAM_TIMEOUTS.has(error.code ?? '') ||
    (error as { statusCode?: number }).statusCode === 504;
  reply.request.log.warn({ err: error, upstream_error: cause.code ?? error.code }, 'upstream request failed');
  reply.logContext = { ...reply.logContext, upstream_error: timedOut ? 'timeout' : 'unavailable' };
  return timedOut
    ? sendProblem(reply, 'gateway-timeout', 'The upstream legacy API did not answer in time. Retry later.')
    : sendProblem(reply, 'bad-gateway', 'The upstream legacy API could not be reached. Retry later.');
}

/** `outage` logs store failures as one episode (outage.ts), where a fault of the gateway is logged every time. */
export function registerErrorHandling(app: FastifyInstance, outage: StoreOutage): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof AppError) {
      if (error.status >= 500) request.log.error({ err: error }, 'request failed');
      return sendProblem(reply, error.code, error.message, error.extra, error.headers);
    }
    if (hasZodFastifySchemaValidationErrors(error)) {
      const errors = fieldErrors(error);
      return sendProblem(reply, 'validation-failed', detailOf(errors), { errors });
    }
    if (error instanceof StoreUnavailableError) {
      // The commit failed and was rolled back (disk error, disk full, lock held too long, connection
      // lost): nothing of the request stands, so the client may resend it safely with the same event_id.
      // An outage: its start and each distinct cause are logged once, the rest counted (outage.ts).
      outage.refused(error, request.log);
      // A test call keeps nothing and is never a replay (docs/api.md, "Test mode"): its answer says so.
      const detail =
        reply.getHeader(TEST_MODE_HEADER) === 'true'
          ? 'The store could not run or record this test call. Nothing was kept; resend it.'
          : 'The store could not confirm that this request was saved. Resend it with the same event_id: if it was saved, the resend is answered as a replay; if not, it is saved then.';
      return sendProblem(reply, 'service-unavailable', detail, {}, { 'retry-after': '1' });
    }
    if (error instanceof BrokenReferenceError) {
      // Not the request's fault, nor one a resend gets past: an operator repairs the row. Named, so that
      // the log and the client both say which row, rather than a fault that names neither.
      request.log.error({ err: error, reference: error.reference }, 'broken reference');
      return sendProblem(
        reply,
        'broken-reference',
        `The store cannot write this: ${error.message}. Nothing was kept; resending answers the same until an operator repairs the row (quote request id ${request.id}).`,
      );
    }
    const code = fastifyErrorCode(error);
    if (code === 'payload-too-large') {
      // The route's own limit (its contract's largest body), or the server's.
      const limit = request.routeOptions.bodyLimit ?? BODY_LIMIT_DEFAULT_BYTES;
      return sendProblem(reply, code, `The body is larger than ${limit} bytes, the limit of this route.`, {
        max_bytes: limit,
      });
    }
    if (code !== undefined) {
      return sendProblem(reply, code, detailFor[code] ?? error.message);
    }
    // A real fault: log everything, tell the client nothing but the request id.
    request.log.error({ err: error }, 'unhandled error');
    return sendProblem(reply, 'internal', `Internal error; quote request id ${request.id} when reporting it.`);
  });
}
