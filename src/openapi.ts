// The OpenAPI 3.1 document, generated from the zod schemas that validate requests, and its reference page.
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import type { OpenAPIV3_1 } from 'openapi-types';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { publishOnce } from './openapi-components.js';
import { webhooksDocument } from './webhooks/catalogue.js';

export const OPENAPI_PATH = '/openapi.json';

/** Set by the route transform, read (and removed) by the document transform. */
const OPTIONAL_BODY = 'x-lead-gateway-optional-body';
const RESPONSE_HEADERS = 'x-lead-gateway-response-headers';

/** An OpenAPI header object: what a route's answers may carry beside their body. */
export interface ResponseHeader {
  description: string;
  schema: Record<string, unknown>;
}

declare module 'fastify' {
  interface FastifySchema {
    /** Headers every answer of the route may carry, problems included (declared on each response). */
    responseHeaders?: Record<string, ResponseHeader>;
  }
}
export const REFERENCE_PATH = '/docs/api';

/** `POST /admin/v1/leads/:id/move` -> `postAdminV1LeadsByIdMove` */
export function operationId(method: string | string[], url: string): string {
  const words = url
    .split('/')
    .filter((part) => part !== '')
    .map((part) => (part.startsWith(':') || part.startsWith('{') ? `by-${part.replace(/[:{}]/g, '')}` : part))
    .flatMap((part) => part.split(/[-_]/))
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1));
  return [[method].flat()[0]!.toLowerCase(), ...words].join('');
}

/** Registered before the routes, so @fastify/swagger sees every one of them. */
export async function registerOpenApi(app: FastifyInstance, version: string): Promise<void> {
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'lead-gateway',
        version,
        description:
          "Lead intake API (v1), the deprecated bot API it replaces, and the service team's admin API. " +
          'Every error is an RFC 9457 problem (application/problem+json).',
        license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
      },
      servers: [{ url: '/', description: 'This gateway' }],
      tags: [
        { name: 'v1', description: 'The integration API: write-only, idempotent by event_id' },
        { name: 'legacy (deprecated)', description: 'The deprecated bot API, translated or forwarded' },
        { name: 'admin', description: 'Keys, migration state and operator actions (service team)' },
        { name: 'operations', description: 'Health, metrics and documents' },
        { name: 'webhooks', description: 'Events the gateway sends to subscribed endpoints (docs/webhooks.md)' },
      ],
      components: {
        securitySchemes: {
          integrationBearer: { type: 'http', scheme: 'bearer', description: 'The integration key (lgv1_…)' },
          adminBearer: { type: 'http', scheme: 'bearer', description: 'The admin token' },
          legacyBotKey: { type: 'apiKey', in: 'header', name: 'X-Bot-API-Key', description: 'The deprecated bot key' },
        },
      },
    },
    transform: (document) => {
      const out = jsonSchemaTransform(document);
      const schema = out.schema as Record<string, unknown>;
      if (schema.hide) return out;
      // Every operation gets a stable operationId (for generated clients), and public ones say so.
      schema.operationId ??= operationId(document.route.method, out.url);
      schema.security ??= [];
      // @fastify/swagger marks every request body required; one the route's schema accepts absent is not.
      const body = document.schema?.body as { safeParse?: (v: unknown) => { success: boolean } } | undefined;
      if (body?.safeParse?.(undefined).success === true) schema[OPTIONAL_BODY] = true;
      delete schema.responseHeaders;
      if (document.schema?.responseHeaders) schema[RESPONSE_HEADERS] = document.schema.responseHeaders;
      return out;
    },
    transformObject: (document) => {
      const out = jsonSchemaTransformObject(document) as OpenAPIV3_1.Document;
      for (const item of Object.values(out.paths ?? {})) {
        for (const op of Object.values(item ?? {}) as (OpenAPIV3_1.OperationObject & {
          [OPTIONAL_BODY]?: boolean;
          [RESPONSE_HEADERS]?: Record<string, ResponseHeader>;
        })[]) {
          if (typeof op !== 'object' || op === null) continue;
          const headers = op[RESPONSE_HEADERS];
          delete op[RESPONSE_HEADERS];
          if (headers) {
            for (const response of Object.values(op.responses ?? {})) {
              if (!('$ref' in response)) response.headers = { ...response.headers, ...headers };
            }
          }
          if (op[OPTIONAL_BODY] !== true) continue;
          delete op[OPTIONAL_BODY];
          if (op.requestBody && !('$ref' in op.requestBody)) op.requestBody.required = false;
        }
      }
      // The events sent to subscribed endpoints (src/webhooks/catalogue.ts): OpenAPI 3.1's top-level webhooks.
      return { ...publishOnce(out), webhooks: webhooksDocument() } as OpenAPIV3_1.Document;
    },
  });
  await app.register(fastifySwaggerUi, {
    routePrefix: REFERENCE_PATH,
    uiConfig: { docExpansion: 'list', deepLinking: true },
  });
  app.get(OPENAPI_PATH, { schema: { hide: true } }, async () => app.swagger());
}
