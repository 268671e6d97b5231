// The contract check: responses and examples validated against the OpenAPI document by an
// independent validator (Ajv, JSON Schema 2020-12, the dialect of OpenAPI 3.1), not by the zod
// schemas the document was generated from.
import { appendFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { gatewayOpenApi } from '../../scripts/openapi-document.js';

/** One response of a test gateway, as the recorder wrote it. */
export interface RecordedResponse {
  method: string;
  /** The route's URL as registered (`/admin/v1/leads/:id`). */
  route: string;
  status: number;
  content_type: string | null;
  /** The body as sent; null when there was none or it was a stream. */
  body: string | null;
  /** Where it came from, for the failure message. */
  test_file?: string;
  /** The gateway forwarded to an upstream legacy API: its document has the forwarded operations. */
  upstream?: boolean;
}

type Doc = { paths: Record<string, Record<string, Operation>>; components?: unknown };
interface Operation {
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
  requestBody?: { content: Record<string, { schema?: unknown }> };
}

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
export const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

/** `/admin/v1/leads/:id` -> `/admin/v1/leads/{id}`, the document's form of a route. */
export const documentPath = (route: string) => route.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

/** Validates bodies against the schemas of one document; compiled once per schema. */
export function createContract(doc: Doc) {
  const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
  addFormats(ajv);
  // The whole document is one schema resource: `#/components/schemas/X` refs resolve inside it.
  ajv.addSchema({ ...doc, $id: 'openapi' });
  const compiled = new Map<string, ValidateFunction>();
  const validator = (path: string) => {
    let fn = compiled.get(path);
    if (!fn) compiled.set(path, (fn = ajv.compile({ $ref: `openapi#/${path}` })));
    return fn;
  };
  const firstError = (fn: ValidateFunction) => {
    const e = fn.errors?.[0];
    return e
      ? `${e.instancePath || '/'} ${e.message ?? 'is invalid'}${e.params && Object.keys(e.params).length > 0 ? ` ${JSON.stringify(e.params)}` : ''}`
      : 'is invalid';
  };

  /** Null when the body fits; otherwise the first schema error. */
  function validateBody(
    kind: 'request' | 'response',
    method: string,
    path: string,
    status: string | null,
    body: unknown,
  ): string | null {
    const op = doc.paths[path]?.[method.toLowerCase()];
    if (!op) return `${method} ${path} is not in the document`;
    const content = kind === 'request' ? op.requestBody?.content : op.responses[status!]?.content;
    if (!content) return `${method} ${path} declares no ${kind === 'request' ? 'request body' : `${status} body`}`;
    const media = Object.keys(content)[0]!;
    const fn = validator(
      pointer(
        'paths',
        path,
        method.toLowerCase(),
        ...(kind === 'request' ? ['requestBody'] : ['responses', status!]),
        'content',
        media,
        'schema',
      ),
    );
    return fn(body) ? null : firstError(fn);
  }

  /** Null when the response is one the operation declares, with that media type and schema. */
  function checkResponse(r: RecordedResponse): string | null {
    const path = documentPath(r.route);
    const method = r.method.toLowerCase();
    const op = doc.paths[path]?.[method];
    if (!op) return 'the operation is not in the document';
    // A forwarded route passes the upstream's own answers on: only those are under `default`.
    const status = op.responses[String(r.status)] ? String(r.status) : null;
    if (status === null)
      return op.responses.default
        ? null
        : `status ${r.status} is not declared (declared: ${Object.keys(op.responses).join(', ')})`;
    const content = op.responses[status]!.content;
    if (!content)
      return r.body === null || r.body === '' ? null : `status ${r.status} declares no body, yet one was sent`;
    const media = (r.content_type ?? '').split(';')[0]!.trim().toLowerCase();
    if (!(media in content) && !('*/*' in content))
      return `content type ${r.content_type} is not declared (declared: ${Object.keys(content).join(', ')})`;
    if (!media.endsWith('json')) return null;
    let body: unknown;
    try {
      body = JSON.parse(r.body ?? '');
    } catch {
      return 'the body is not JSON';
    }
    const fn = validator(
      pointer('paths', path, method, 'responses', status, 'content', media in content ? media : '*/*', 'schema'),
    );
    return fn(body) ? null : firstError(fn);
  }

  /** Null when `value` fits the schema at a JSON Pointer of the document (`components/schemas/Problem`). */
  function validateAt(at: string, value: unknown): string | null {
    const fn = validator(at);
    return fn(value) ? null : firstError(fn);
  }

  return { validateBody, checkResponse, validateAt };
}

/** Failures of a list of recorded responses, one line each, deduplicated by operation, status and error. */
export function checkRecorded(docs: { local: Doc; upstream?: Doc }, records: RecordedResponse[]): string[] {
  const local = createContract(docs.local);
  const upstream = docs.upstream ? createContract(docs.upstream) : local;
  const failures = new Map<string, string>();
  for (const r of records) {
    const error = (r.upstream === true ? upstream : local).checkResponse(r);
    if (error === null) continue;
    const key = `${r.method} ${documentPath(r.route)} ${r.status}: ${error}`;
    if (!failures.has(key)) failures.set(key, `${key}${r.test_file ? ` (from ${r.test_file})` : ''}`);
  }
  return [...failures.values()];
}

/** The document of a gateway on these rules, without an upstream (the published one) or with one. */
export async function gatewayDocument(rulesDir: string, options: { upstream?: boolean } = {}): Promise<Doc> {
  const upstream = options.upstream
    ? { upstream: { url: 'http://127.0.0.1:9', connectTimeoutMs: 100, timeoutMs: 100 } }
    : {};
  return (await gatewayOpenApi(rulesDir, upstream)) as unknown as Doc;
}

/**
 * Appends every response of a test gateway to `file` (JSON lines). Routes hidden from the document
 * (the legacy catch-all, the document itself) and answers without a route (404, 405) are left out:
 * they belong to no operation.
 */
export function recordResponses(
  app: FastifyInstance,
  file: string,
  source: { testFile?: string; upstream?: boolean },
): void {
  app.addHook('onSend', async (request, reply, payload) => {
    const route = request.routeOptions.url;
    const schema = request.routeOptions.schema as { hide?: boolean } | undefined;
    if (route === undefined || schema?.hide === true || request.method === 'HEAD' || schema === undefined)
      return payload;
    // Node sends no body with a 204 or 304, whatever the payload.
    const body =
      reply.statusCode === 204 || reply.statusCode === 304
        ? null
        : typeof payload === 'string'
          ? payload
          : Buffer.isBuffer(payload)
            ? payload.toString('utf8')
            : null;
    const record: RecordedResponse = {
      method: request.method,
      route,
      status: reply.statusCode,
      content_type: (reply.getHeader('content-type') as string | undefined) ?? null,
      body,
      test_file: source.testFile,
      ...(source.upstream ? { upstream: true } : {}),
    };
    appendFileSync(file, `${JSON.stringify(record)}\n`);
    return payload;
  });
}
