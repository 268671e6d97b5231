// The problems each operation can answer, declared from one list: its OpenAPI responses and the
// serializer that checks them come from the same codes, so a declaration cannot drift from a route.
import type { FastifyInstance, RouteOptions } from 'fastify';
import { z } from 'zod';
import { problemCatalogue, ProblemSchema, type ProblemCode } from '../errors.js';

declare module 'fastify' {
  interface FastifySchema {
    /** Problems this route's own service decides (404, 409, ...); the rest are derived below. */
    problems?: readonly ProblemCode[];
  }
}

export const PROBLEM_MEDIA_TYPE = 'application/problem+json';

/**
 * Every route: two credential headers or a broken URL (400), a `%00` in the URL or a `\u0000` in
 * the body (400), a fault or a stored row naming one the store does not hold (500), a storage failure
 * or a request that arrives while the gateway drains (503).
 */
const EVERY_ROUTE: readonly ProblemCode[] = [
  'bad-request',
  'nul-character',
  'unpaired-surrogate',
  'internal',
  'broken-reference',
  'service-unavailable',
];

/** Fastify reads a body on these methods whether or not the route takes one (json-body.ts). */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const BODY_PROBLEMS: readonly ProblemCode[] = [
  'malformed-json',
  'payload-too-large',
  'unsupported-media-type',
  'nesting-too-deep',
  'too-many-values',
  'string-too-long',
  'request-timeout',
];

/** The authentication hook of each interface, named by the security scheme its routes declare. */
const SECURITY_PROBLEMS: Record<string, readonly ProblemCode[]> = {
  integrationBearer: ['unauthorized', 'rate-limited'],
  // The 403 of a switched-off integration holds on every legacy path and method.
  legacyBotKey: ['unauthorized', 'forbidden', 'rate-limited'],
  adminBearer: ['unauthorized', 'rate-limited'],
};

/** Requests sent on to the upstream legacy API (legacy/pass-through.ts). */
const FORWARDED_PROBLEMS: readonly ProblemCode[] = ['bad-gateway', 'gateway-timeout'];

/** OpenAPI responses for a list of codes: one per status, `application/problem+json`, naming each code. */
export function problemResponses(
  codes: Iterable<ProblemCode>,
): Record<number, { description: string; content: Record<string, { schema: typeof ProblemSchema }> }> {
  const byStatus = new Map<number, ProblemCode[]>();
  for (const code of new Set(codes)) {
    const status = problemCatalogue[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries(
    [...byStatus]
      .sort(([a], [b]) => a - b)
      .map(([status, list]) => [
        status,
        {
          description: list.map((code) => `\`${code}\`: ${problemCatalogue[code].title}`).join('; '),
          content: { [PROBLEM_MEDIA_TYPE]: { schema: ProblemSchema } },
        },
      ]),
  );
}

/** The codes a route can answer: its own, and those its method, schemas, security and forwarding imply. */
export function routeProblems(route: Pick<RouteOptions, 'method' | 'schema' | 'config'>): ProblemCode[] {
  const schema = route.schema ?? {};
  const codes: ProblemCode[] = [...EVERY_ROUTE];
  if ([route.method].flat().some((m) => BODY_METHODS.has(m))) codes.push(...BODY_PROBLEMS);
  if (schema.body !== undefined || schema.querystring !== undefined || schema.params !== undefined)
    codes.push('validation-failed');
  const security = (schema as { security?: Record<string, unknown>[] }).security ?? [];
  for (const name of security.flatMap((s) => Object.keys(s))) codes.push(...(SECURITY_PROBLEMS[name] ?? []));
  if ((route.config as { forwarded?: boolean } | undefined)?.forwarded === true) codes.push(...FORWARDED_PROBLEMS);
  codes.push(...(schema.problems ?? []));
  return codes;
}

/**
 * Registered before every route: completes each documented route's `response` with its problems.
 * A route that answers something other than JSON (`produces`) gets its 200 declared as that media
 * type; a forwarded route also answers whatever the upstream answers (`default`).
 */
export function declareProblems(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const schema = route.schema;
    if (schema === undefined || (schema as { hide?: boolean }).hide === true) return;
    const response: Record<string | number, unknown> = { ...(schema.response as Record<string, unknown> | undefined) };
    const produces = (schema as { produces?: string[] }).produces;
    if (produces !== undefined && !Object.keys(response).some((s) => s.startsWith('2'))) {
      response[200] = {
        description: 'OK',
        content: Object.fromEntries(produces.map((type) => [type, { schema: z.string() }])),
      };
    }
    const problems: Record<number, { description: string; content: Record<string, { schema: z.ZodType }> }> =
      problemResponses(routeProblems(route));
    if ((route.config as { forwarded?: boolean } | undefined)?.forwarded === true) {
      // The upstream may answer any status, one of the gateway's own problems' included.
      const upstream = { '*/*': { schema: z.unknown() } };
      response.default = { description: "The upstream legacy API's answer, passed on unchanged", content: upstream };
      for (const p of Object.values(problems))
        Object.assign(p, {
          description: `${p.description}; or the upstream's own answer`,
          content: { ...p.content, ...upstream },
        });
    }
    schema.response = { ...response, ...problems };
  });
}
