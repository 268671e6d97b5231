// Golden fixtures: for each example integration, requests as its bot sends them and what the rules must
// make of them, in the names a workspace owner reads (stage, tags, field values), one table-driven test.
//
// A fixture is test/rules/golden/<workspace>.<integration>.yaml. Every case runs on a fresh gateway with the
// example rules; each step's whole outcome is compared with `expect`, so a change to the rules or to
// the translation shows up as a diff in words. Bodies may say {{tag:<name>}} for a tag's id and
// {{lead}} for the id of the lead the previous step answered with.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { LightMyRequestResponse } from 'fastify';
import { parse } from 'yaml';
import { z } from 'zod';
import { afterEach, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../helper.js';
import { stableId } from '../../src/rules/ids.js';
import type { Integration, Workspace } from '../../src/rules/catalog.js';
import type { LeadObject } from '../../src/lead/schemas.js';

const GOLDEN_DIR = join(import.meta.dirname, 'golden');
const LEGACY_KEY = 'golden-legacy-bot-key-0123456789';

const StepSchema = z.strictObject({
  send: z.strictObject({
    api: z.enum(['v1', 'legacy']),
    method: z.enum(['POST', 'PATCH']).default('POST'),
    /** Below /api/integrations/v1/ or /api/bots/api/. */
    path: z.string(),
    headers: z.record(z.string(), z.string()).default({}),
    body: z.unknown(),
  }),
  expect: z.record(z.string(), z.unknown()),
});
const FixtureSchema = z.strictObject({
  integration: z.string(),
  cases: z.array(z.strictObject({ name: z.string(), steps: z.array(StepSchema).min(1) })).min(1),
});

/** A lead object as its owner reads it: catalog names instead of ids, field values by field name. */
function summarizeLead(ws: Workspace, lead: LeadObject) {
  const username = (id: string | null) => (id === null ? null : (ws.users.get(id)?.username ?? `?${id}`));
  const fields: Record<string, unknown> = {};
  for (const v of lead.custom_field_values) {
    const field = ws.fieldsById.get(v.field);
    if (!field) throw new Error(`lead has a value for field ${v.field}, which is not in the catalog`);
    const byType: Record<string, unknown> = {
      single_choice: v.option_detail?.label ?? null,
      multiple_choice: v.selected_options_detail.map((o) => o.label),
      boolean: v.boolean_value,
      number: v.decimal_value,
      date: v.date_value,
      datetime: v.datetime_value,
    };
    fields[field.name] = field.type in byType ? byType[field.type] : v.text_value;
  }
  return {
    stage: ws.stages.get(lead.stage ?? '')?.name ?? lead.stage,
    status: lead.status === null ? null : (ws.statuses.get(lead.status)?.name ?? lead.status),
    group: lead.group === null ? null : (ws.groups.get(lead.group)?.name ?? lead.group),
    assigned_to: username(lead.assigned_to),
    invited_by: username(lead.invited_by),
    source: lead.source,
    tags: lead.tags.map((t) => t.name).sort(),
    fields,
  };
}

/** A step's whole observable outcome in fixture terms. */
function outcomeOf(ws: Workspace, api: 'v1' | 'legacy', path: string, status: number, body: Record<string, unknown>) {
  if (status >= 400) return { status, problem: body.code };
  const lead = (l: unknown) => (l === null ? null : summarizeLead(ws, l as LeadObject));
  if (api === 'legacy') return path.startsWith('tags/') ? { status, tag: body.name } : { status, lead: lead(body) };
  if ('intake_outcome' in body) {
    return {
      status,
      outcome: body.replayed ? 'replayed' : body.intake_outcome,
      lead: lead(body.lead),
      answers: body.answers,
    };
  }
  return { status, outcome: body.replayed ? 'replayed' : 'answered', answers: body.answers };
}

function fill(value: unknown, ws: Workspace, lastLead: string | null): unknown {
  if (typeof value === 'string') {
    return value
      .replace(/\{\{tag:([^}]+)\}\}/g, (_m, name: string) => stableId(ws.slug, 'tag', name))
      .replace(/\{\{lead\}\}/g, () => {
        if (lastLead === null) throw new Error('{{lead}} used before any step answered with a lead');
        return lastLead;
      });
  }
  if (Array.isArray(value)) return value.map((v) => fill(v, ws, lastLead));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, ws, lastLead)]));
  }
  return value;
}

const fixtures = readdirSync(GOLDEN_DIR)
  .filter((name) => name.endsWith('.yaml'))
  .sort()
  .map((name) => ({ name, ...FixtureSchema.parse(parse(readFileSync(join(GOLDEN_DIR, name), 'utf8'))) }));

let gw: Gateway | null = null;
afterEach(async () => {
  await gw?.close();
  gw = null;
});

it('has a fixture for every example integration', async () => {
  gw = await startGateway();
  const handles = [...gw.rules.current().integrations.values()].map((i) => i.handle).sort();
  expect(fixtures.map((f) => f.integration).sort()).toEqual(handles);
});

describe.each(fixtures)('$name', (fixture) => {
  it.each(fixture.cases)('$name', async ({ steps }) => {
    gw = await startGateway();
    const integration = gw.rules.current().findIntegration(fixture.integration) as Integration;
    expect(integration, `no integration ${fixture.integration} in the example rules`).toBeDefined();
    const ws = integration.workspace;
    const v1Key = await gw.issueKey(integration.handle);
    if (steps.some((s) => s.send.api === 'legacy')) {
      const imported = await gw.admin('POST', `/admin/v1/integrations/${integration.handle}/keys/import`, {
        key: LEGACY_KEY,
      });
      expect(imported.statusCode).toBe(201);
    }
    let lastLead: string | null = null;
    for (const [i, step] of steps.entries()) {
      const { api, method, path, headers, body } = step.send;
      const res: LightMyRequestResponse = await gw.app.inject({
        method,
        url: `${api === 'v1' ? '/api/integrations/v1/' : '/api/bots/api/'}${fill(path, ws, lastLead) as string}`,
        headers: {
          ...headers,
          ...(api === 'v1' ? { authorization: `Bearer ${v1Key}` } : { 'x-bot-api-key': LEGACY_KEY }),
        },
        payload: fill(body, ws, lastLead) as object,
      });
      const parsed: Record<string, unknown> = res.json();
      expect(outcomeOf(ws, api, path, res.statusCode, parsed), `step ${i + 1}: ${method} ${path}`).toEqual(step.expect);
      const leadId: unknown = api === 'legacy' ? parsed.id : (parsed.lead as { id?: unknown } | null | undefined)?.id;
      if (typeof leadId === 'string') lastLead = leadId;
    }
  });
});
