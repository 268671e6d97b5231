// The OpenAPI document: served, generated from the validating schemas, and good for a typed client.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from './helper.js';

let gw: Gateway;
let doc: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const ROOT = join(import.meta.dirname, '..');

beforeAll(async () => {
  gw = await startGateway();
  const res = await gw.app.inject({ method: 'GET', url: '/openapi.json' });
  expect(res.statusCode).toBe(200);
  doc = res.json();
});
afterAll(() => gw.close());

describe('the OpenAPI document', () => {
  it('is OpenAPI 3.1 with the v1, legacy and admin operations and their security', () => {
    expect(doc.openapi).toBe('3.1.0');
    const lead = doc.paths['/api/integrations/v1/leads/'].post;
    expect(lead.security).toEqual([{ integrationBearer: [] }]);
    expect(Object.keys(lead.responses)).toEqual(expect.arrayContaining(['200', '201', '4XX', '5XX']));
    expect(doc.paths['/api/bots/api/leads/'].post).toMatchObject({ deprecated: true, security: [{ legacyBotKey: [] }] });
    expect(doc.paths['/admin/v1/integrations/{integration}/switch-off'].post.security).toEqual([{ adminBearer: [] }]);
    expect(doc.paths['/healthz'].get.security).toEqual([]);
    const ids = Object.values(doc.paths).flatMap((p) => Object.values(p as object).map((op: { operationId: string }) => op.operationId));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('describes the request with the same rules that validate it', () => {
    const schema = doc.components.schemas.LeadSubmissionInput;
    expect(schema.required).toEqual(expect.arrayContaining(['event_id', 'first_name']));
    expect(schema.additionalProperties).toBe(false);
    expect(schema.properties.event_id).toMatchObject({ type: 'string', minLength: 1, maxLength: 255 });
    expect(schema.properties.stage).toMatchObject({ not: {} });
  });

  it('has a rendered reference page', async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/docs/api/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(res.body).toMatch(/swagger/i);
  });

  it('generates a typed client that compiles, and whose types refuse wrong calls', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-client-'));
    // Forbidden members are `not: {}` ("nothing is allowed"); openapi-typescript would say unknown.
    const nothing = (o: { not?: object }) => o.not !== undefined && Object.keys(o.not).length === 0;
    const ast = await openapiTS(doc as never, {
      transform: (schema) => (nothing(schema as { not?: object }) ? ts.factory.createKeywordTypeNode(ts.SyntaxKind.NeverKeyword) : undefined),
    });
    writeFileSync(join(dir, 'api.ts'), astToString(ast));
    writeFileSync(
      join(dir, 'client.ts'),
      `import type { paths } from './api';
type Leads = paths['/api/integrations/v1/leads/']['post'];
type LeadBody = Leads['requestBody'] extends { content: { 'application/json': infer B } } | undefined ? B : never;
type Created = Leads['responses']['201']['content']['application/json'];
type Problem = Leads['responses']['4XX']['content']['application/json'];

export async function submitLead(base: string, key: string, body: LeadBody): Promise<Created | Problem> {
  const res = await fetch(base + '/api/integrations/v1/leads/', {
    method: 'POST',
    headers: { authorization: 'Bearer ' + key, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return (await res.json()) as Created | Problem;
}

export const ok: LeadBody = { event_id: 'e-1', first_name: 'Aziza', phone: '901234567', answers: { laptop: 'yes' } };
// @ts-expect-error first_name is required
export const missing: LeadBody = { event_id: 'e-1' };
// @ts-expect-error stage comes from the integration settings
export const forbidden: LeadBody = { event_id: 'e-1', first_name: 'A', stage: 'x' };
export const outcome: Created['intake_outcome'] = 'reactivated';
// @ts-expect-error not an outcome
export const wrong: Created['intake_outcome'] = 'exploded';
export const status: Problem['status'] = 422;
`,
    );
    const tsc = spawnSync(
      process.execPath,
      [join(ROOT, 'node_modules/typescript/bin/tsc'), '--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext',
        '--types', 'node', '--typeRoots', join(ROOT, 'node_modules/@types'), '--skipLibCheck', join(dir, 'client.ts')],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.status).toBe(0);
  });
});
