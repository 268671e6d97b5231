// The OpenAPI document: served, generated from the validating schemas, and good for a typed client.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Ajv2020 from 'ajv/dist/2020.js';
import { startGateway, type Gateway } from './helper.js';
import { EVENT_TYPES } from '../src/webhooks/catalogue.js';

let gw: Gateway;
let doc: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
// An operation of the document as JSON: a type of its own, so the lint exception covers one line.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Operation = { responses: Record<string, any> };
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
    expect(Object.keys(lead.responses)).toEqual([
      '200',
      '201',
      '400',
      '401',
      '408',
      '409',
      '413',
      '415',
      '422',
      '429',
      '500',
      '503',
    ]);
    expect(doc.paths['/api/bots/api/leads/'].post).toMatchObject({
      deprecated: true,
      security: [{ legacyBotKey: [] }],
    });
    expect(doc.paths['/admin/v1/integrations/{integration}/switch-off'].post.security).toEqual([{ adminBearer: [] }]);
    expect(doc.paths['/healthz'].get.security).toEqual([]);
    const ids = Object.values(doc.paths).flatMap((p) =>
      Object.values(p as object).map((op: { operationId: string }) => op.operationId),
    );
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('carries the release of package.json as its version, as --version and build_info do', () => {
    expect(doc.info.version).toBe(
      (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version,
    );
  });

  it('declares each status an operation answers, errors as application/problem+json, never as a range', () => {
    const ops = Object.values(doc.paths).flatMap((p) => Object.values(p as Record<string, Operation>));
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
    expect(doc.paths['/admin/v1/integrations/{integration}/switch-off'].post.responses['409'].description).toMatch(
      /`conflict`/,
    );
    expect(doc.paths['/readyz'].get.responses['503']).toBeDefined();
  });

  it('names the catalogue codes of a problem, and the shape of the migration report', () => {
    expect(doc.components.schemas.Problem.properties.code.enum).toEqual(
      expect.arrayContaining(['validation-failed', 'event-id-conflict', 'rate-limited']),
    );
    const report =
      doc.paths['/admin/v1/integrations/{integration}/report'].get.responses['200'].content['application/json'].schema;
    expect(report).toEqual({ $ref: '#/components/schemas/MigrationReport' });
    expect(doc.components.schemas.MigrationReport.required).toEqual(
      expect.arrayContaining(['legacy', 'v1', 'v1_test', 'readiness', 'unlinked_legacy_leads']),
    );
  });

  it('declares the test mode header on every answer of both v1 operations, and on no other operation', () => {
    for (const path of ['/api/integrations/v1/leads/', '/api/integrations/v1/leads/answers/']) {
      for (const response of Object.values(
        doc.paths[path].post.responses as Record<string, { headers?: Record<string, { schema: unknown }> }>,
      )) {
        expect(response.headers?.['Lead-Gateway-Test-Mode']?.schema).toEqual({ type: 'string', enum: ['true'] });
      }
    }
    expect(doc.paths['/admin/v1/integrations/{integration}/keys/test'].post.responses['201'].headers).toBeUndefined();
    expect(
      doc.paths['/api/bots/api/leads/'].post.responses['201']?.headers?.['Lead-Gateway-Test-Mode'],
    ).toBeUndefined();
  });

  it('marks optional request bodies as not required', () => {
    for (const path of ['keys', 'keys/test', 'keys/renew', 'link', 'keys/{key}/revoke']) {
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

  it('gives a typed client: the docs recipe compiles against the types npm run client:types writes, and they refuse wrong calls', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-client-'));
    const gen = spawnSync(
      process.execPath,
      [
        join(ROOT, 'node_modules/tsx/dist/cli.mjs'),
        'scripts/generate-client-types.ts',
        '--out',
        join(dir, 'lead-gateway.d.ts'),
      ],
      {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 60_000,
      },
    );
    expect(gen.stderr).toBe('');
    expect(gen.status).toBe(0);
    const recipe = /<!-- typed-client -->\n```ts\n([\s\S]*?)\n```/.exec(
      readFileSync(join(ROOT, 'docs/api.md'), 'utf8'),
    )?.[1];
    expect(recipe).toBeDefined();
    writeFileSync(join(dir, 'client.ts'), recipe!);
    // A client project set up as this repository is: an ES module package compiled under NodeNext,
    // where a relative import names its file with its extension (without it, TS2834).
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        extends: join(ROOT, 'tsconfig.json'),
        compilerOptions: {
          noEmit: true,
          rootDir: dir,
          lib: ['ES2023', 'DOM'],
          typeRoots: [join(ROOT, 'node_modules/@types')],
        },
        include: [],
        files: ['client.ts', 'misuse.ts'],
      }),
    );
    writeFileSync(
      join(dir, 'misuse.ts'),
      `import type { Answer, LeadSubmission, Problem } from './client.js';
export const ok: LeadSubmission = { event_id: 'e-1', first_name: 'Aziza', phone: '901234567', answers: { laptop: 'yes' } };
// @ts-expect-error first_name is required
export const missing: LeadSubmission = { event_id: 'e-1' };
// @ts-expect-error stage comes from the integration settings
export const forbidden: LeadSubmission = { event_id: 'e-1', first_name: 'A', stage: 'x' };
// @ts-expect-error not a code of the catalogue
export const code: Problem['code'] = 'exploded';
export const outcome = (a: Answer) => (a.ok ? a.body.intake_outcome : a.body.status);
// @ts-expect-error not an outcome
export const wrong: Extract<Answer, { ok: true }>['body']['intake_outcome'] = 'exploded';
`,
    );
    const tsc = spawnSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', dir], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.status).toBe(0);
    // Two child processes of up to 60 s each (tsx, then tsc): more than the default 20 s on busy cores.
  }, 150_000);
});

describe("the OpenAPI document's webhooks", () => {
  it('lists every event type of the catalogue, and an event the outbox wrote fits its envelope', async () => {
    expect(Object.keys(doc.webhooks).sort()).toEqual([...EVENT_TYPES].sort());
    for (const type of EVENT_TYPES) expect(doc.webhooks[type].post.requestBody.required, type).toBe(true);
    const created = await gw.admin('POST', '/admin/v1/webhooks/endpoints', {
      url: 'https://hooks.example.com/x',
      event_types: ['integration.key_issued'],
    });
    expect(created.statusCode).toBe(201);
    await gw.issueKey('brightpath:website-form');
    const [row] = await gw.inspect.dump('webhook_events');
    const event = await gw.store.readOne((r) => r.webhooks.getEvent(String(row![0])));
    const schema = doc.webhooks[event!.type].post.requestBody.content['application/json'].schema;
    const validate = new Ajv2020.default({ strict: false }).compile(schema);
    expect(validate(JSON.parse(event!.payload)), JSON.stringify(validate.errors)).toBe(true);
    expect(validate({ ...JSON.parse(event!.payload), data: { key: 'lgv1_x' } })).toBe(false);
  });
});
