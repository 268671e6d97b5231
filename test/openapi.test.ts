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
    expect(Object.keys(lead.responses)).toEqual(['200', '201', '400', '401', '408', '409', '413', '415', '422', '429', '500', '503']);
    expect(doc.paths['/api/bots/api/leads/'].post).toMatchObject({ deprecated: true, security: [{ legacyBotKey: [] }] });
    expect(doc.paths['/admin/v1/integrations/{integration}/switch-off'].post.security).toEqual([{ adminBearer: [] }]);
    expect(doc.paths['/healthz'].get.security).toEqual([]);
    const ids = Object.values(doc.paths).flatMap((p) => Object.values(p as object).map((op: { operationId: string }) => op.operationId));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('declares each status an operation answers, errors as application/problem+json, never as a range', () => {
    const ops = Object.values(doc.paths).flatMap((p) => Object.values(p as Record<string, { responses: Record<string, any> }>)); // eslint-disable-line @typescript-eslint/no-explicit-any
    for (const op of ops) {
      expect(Object.keys(op.responses).filter((s) => /X/.test(s))).toEqual([]);
      for (const [status, response] of Object.entries(op.responses)) {
        if (Number(status) < 400) continue;
        expect(Object.keys(response.content)).toEqual(['application/problem+json']);
        expect(response.content['application/problem+json'].schema).toEqual({ $ref: '#/components/schemas/Problem' });
      }
    }
    const answers = doc.paths['/api/integrations/v1/leads/answers/'].post.responses;
    expect(answers['404'].description).toMatch(/not-found/);
    expect(answers['409'].description).toMatch(/event-id-conflict/);
    expect(doc.paths['/api/bots/api/leads/{id}/'].delete.responses['403'].description).toMatch(/forbidden/);
    expect(doc.paths['/admin/v1/integrations/{integration}/switch-off'].post.responses['409'].description).toMatch(/`conflict`/);
    expect(doc.paths['/readyz'].get.responses['503']).toBeDefined();
  });

  it('names the catalogue codes of a problem, and the shape of the migration report', () => {
    expect(doc.components.schemas.Problem.properties.code.enum).toEqual(expect.arrayContaining(['validation-failed', 'event-id-conflict', 'rate-limited']));
    const report = doc.paths['/admin/v1/integrations/{integration}/report'].get.responses['200'].content['application/json'].schema;
    expect(report).toEqual({ $ref: '#/components/schemas/MigrationReport' });
    expect(doc.components.schemas.MigrationReport.required).toEqual(expect.arrayContaining(['legacy', 'v1', 'readiness', 'unlinked_legacy_leads']));
  });

  it('marks optional request bodies as not required', () => {
    for (const path of ['keys', 'keys/renew', 'link', 'keys/{key}/revoke']) {
      expect(doc.paths[`/admin/v1/integrations/{integration}/${path}`].post.requestBody.required).toBe(false);
    }
    expect(doc.paths['/api/integrations/v1/leads/'].post.requestBody.required).toBe(true);
    expect(doc.paths['/admin/v1/integrations/{integration}/switch-off'].post.requestBody.required).toBe(true);
  });

  it('publishes each shape once: no unused component, no input twin equal to its output', () => {
    const names = Object.keys(doc.components.schemas);
    expect(names.filter((n) => n.endsWith('Input'))).toEqual([]);
    const text = JSON.stringify(doc.paths) + JSON.stringify(doc.components.schemas);
    for (const name of names) expect(text).toContain(`"#/components/schemas/${name}"`);
  });

  it('describes the request with the same rules that validate it', () => {
    const schema = doc.components.schemas.LeadSubmission;
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
type Problem = Leads['responses']['422']['content']['application/problem+json'];

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
