// The contract check itself: examples in the document and in docs/api.md fit it, and the check of
// recorded responses (run on every test gateway's responses after the suite) names what breaks.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkRecorded, createContract, gatewayDocument, pointer, type RecordedResponse } from './support/contract.js';
import { EXAMPLE_RULES } from './helper.js';

type Doc = Awaited<ReturnType<typeof gatewayDocument>>;
let doc: Doc;
beforeAll(async () => {
  doc = await gatewayDocument(EXAMPLE_RULES);
});

/** Every `examples` of a schema in the document, with the JSON Pointer of that schema. */
function schemaExamples(value: unknown, at: string[], out: { at: string; example: unknown }[] = []) {
  if (value === null || typeof value !== 'object') return out;
  const v = value as Record<string, unknown>;
  if (Array.isArray(v.examples) && (v.type !== undefined || v.properties !== undefined)) {
    for (const example of v.examples) out.push({ at: pointer(...at), example });
  }
  for (const [key, child] of Object.entries(v)) if (key !== 'examples') schemaExamples(child, [...at, key], out);
  return out;
}

/** JSON blocks of a Markdown file with the marker before them: `<!-- openapi: response POST /path 200 -->`, or `sketch`. */
function markedBlocks(markdown: string) {
  const blocks: { marker: string; json: string; line: number }[] = [];
  const re = /(?:<!-- openapi: ([^>]*?) -->\n)?```json\n([\s\S]*?)\n```/g;
  for (const m of markdown.matchAll(re))
    blocks.push({ marker: m[1] ?? '', json: m[2]!, line: markdown.slice(0, m.index).split('\n').length });
  return blocks;
}

describe('examples', () => {
  it('every example in the document fits its schema', () => {
    const contract = createContract(doc);
    const found = schemaExamples(doc, []);
    expect(found.map((f) => f.at)).toEqual(
      expect.arrayContaining([
        'components/schemas/Problem',
        'components/schemas/LeadSubmission',
        'components/schemas/AnswersSubmission',
      ]),
    );
    for (const { at, example } of found)
      expect({ at, error: contract.validateAt(at, example) }).toEqual({ at, error: null });
  });

  it('every JSON block of docs/api.md is marked: a request or response of an operation (and fits it), or a sketch', () => {
    const contract = createContract(doc);
    const blocks = markedBlocks(readFileSync(join(import.meta.dirname, '..', 'docs', 'api.md'), 'utf8'));
    expect(blocks.filter((b) => b.marker.startsWith('response')).length).toBeGreaterThanOrEqual(4);
    for (const b of blocks) {
      const where = `docs/api.md line ${b.line}`;
      const [kind, method, path, status] = b.marker.split(' ');
      if (kind === 'sketch') continue;
      expect({ where, kind }).toEqual({ where, kind: expect.stringMatching(/^(request|response)$/) });
      const error = contract.validateBody(
        kind as 'request' | 'response',
        method!,
        path!,
        status ?? null,
        JSON.parse(b.json),
      );
      expect({ where, marker: b.marker, error }).toEqual({ where, marker: b.marker, error: null });
    }
  });
});

describe('the check of recorded responses', () => {
  const record = (r: Partial<RecordedResponse>): RecordedResponse => ({
    method: 'POST',
    route: '/api/integrations/v1/leads/answers/',
    status: 404,
    content_type: 'application/problem+json; charset=utf-8',
    body: JSON.stringify({
      type: 'urn:lead-gateway:problem:not-found',
      title: 'Not found',
      status: 404,
      detail: 'No lead.',
      code: 'not-found',
      request_id: 'r-1',
    }),
    ...r,
  });

  it('passes a response the operation declares', () => {
    expect(checkRecorded({ local: doc }, [record({})])).toEqual([]);
  });

  it('names the operation, the status and the first schema error of one that breaks the document', () => {
    const failures = checkRecorded({ local: doc }, [
      record({ route: '/api/integrations/v1/leads/', status: 404 }),
      record({ content_type: 'application/json' }),
      record({ body: JSON.stringify({ code: 'not-found' }) }),
      record({
        body: JSON.stringify({
          type: 't',
          title: 't',
          status: 404,
          detail: 'd',
          code: 'no-such-code',
          request_id: 'r',
        }),
      }),
      record({
        method: 'GET',
        route: '/admin/v1/leads/:id',
        status: 200,
        content_type: 'application/json',
        body: '{"id":"not-a-uuid"}',
      }),
    ]);
    expect(failures).toEqual([
      expect.stringMatching(
        /^POST \/api\/integrations\/v1\/leads\/ 404: status 404 is not declared \(declared: 200, 201, 400, 401/,
      ),
      expect.stringMatching(
        /^POST \/api\/integrations\/v1\/leads\/answers\/ 404: content type application\/json is not declared \(declared: application\/problem\+json\)/,
      ),
      expect.stringMatching(
        /^POST \/api\/integrations\/v1\/leads\/answers\/ 404: \/ must have required property 'type'/,
      ),
      expect.stringMatching(
        /^POST \/api\/integrations\/v1\/leads\/answers\/ 404: \/code must be equal to one of the allowed values/,
      ),
      expect.stringMatching(
        /^GET \/admin\/v1\/leads\/\{id\} 200: \/ must have required property|^GET \/admin\/v1\/leads\/\{id\} 200: \/id must match/,
      ),
    ]);
  });
});
