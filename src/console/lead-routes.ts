// The leads browser: a workspace's leads filtered by integration, stage and custom field values (the
// admin API's listLeads, the same filters), and a lead's page with each field's value and who wrote it.
// A workspace owner's queries are held to their workspace; another workspace's lead is a 404.
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { ConsoleLeadParamsSchema } from './schemas.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { AppError } from '../errors.js';
import type { Store } from '../store/store.js';
import type { Rules, Workspace } from '../rules/catalog.js';
import type { RulesHolder } from '../rules/loader.js';
import type { FieldValue } from '../store/repos/field-values.js';
import { listLeads } from '../lead/operator.js';
import { renderLead } from '../lead/view.js';
import { LEAD_FILTER_CONDITIONS_MAX } from '../admin/schemas.js';
import { render } from './pages.js';
import type { Viewer } from './users.js';

const hidden = { schema: { hide: true } };
/** Leads per page of the browser; `before` pages on, as the admin API's next_before. */
export const LEADS_PAGE_SIZE = 50;
/** Empty custom-field filter rows the form offers (each a field and a value). */
export const FIELD_FILTER_ROWS = 3;

const many = z
  .union([z.string().max(200), z.array(z.string().max(200))])
  .optional()
  .transform((v) => (v === undefined ? [] : [v].flat()))
  .pipe(z.array(z.string()).max(LEAD_FILTER_CONDITIONS_MAX));
/** A GET form sends every field, empty ones as "": empty means "any". */
const optional = <T extends z.ZodType<string>>(schema: T) =>
  z
    .union([z.literal(''), schema])
    .optional()
    .transform((v) => (v === '' ? undefined : v));

export const LeadsPageQuerySchema = z.object({
  workspace: optional(z.string().max(100)),
  integration: optional(z.string().max(200)),
  stage: optional(z.uuid()),
  /** Custom-field filters as pairs: the n-th `fk` (a field key) with the n-th `fv` (a value). */
  fk: many,
  fv: many,
  before: optional(z.iso.datetime()),
});

/** A console GET's query, or a 400 page that says what is wrong with it. */
function parsedQuery<T extends z.ZodType>(schema: T, value: unknown): z.infer<T> {
  const result = schema.safeParse(value ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  throw new AppError('bad-request', `${issue.path.join('.') || 'query'}: ${issue.message}`);
}

/** The workspace the viewer browses: their own (another asked for is a 404), or the one the team chose. */
function workspaceFor(rules: Rules, viewer: Viewer, asked: string | undefined): Workspace {
  const all = [...rules.workspaces.values()].sort((a, b) => a.name.localeCompare(b.name));
  const wanted = viewer.workspace ?? asked;
  const ws = wanted === undefined ? all[0] : all.find((w) => w.slug === wanted || w.id === wanted);
  if (!ws || (asked !== undefined && viewer.workspace !== null && ws.slug !== asked && ws.id !== asked))
    throw new AppError('not-found', `No workspace "${asked ?? wanted}".`);
  return ws;
}

/** A field's value as a person reads it: the option labels for choice fields. */
export function fieldValueText(ws: Workspace, v: FieldValue): string {
  const label = (id: string) => ws.optionsById.get(id)?.label ?? id;
  if (v.optionIds.length > 0) return v.optionIds.map(label).join(', ');
  if (v.optionId !== null) return label(v.optionId);
  if (v.bool !== null) return v.bool ? 'yes' : 'no';
  return v.text ?? v.decimal ?? v.date ?? v.datetime ?? '';
}

/** The next page's address: the same filters, from where this page ended. */
function nextPage(
  ws: Workspace,
  query: z.infer<typeof LeadsPageQuerySchema>,
  filters: { key: string; value: string }[],
  before: string,
): string {
  const params = new URLSearchParams({ workspace: ws.slug });
  if (query.integration !== undefined) params.set('integration', query.integration);
  if (query.stage !== undefined) params.set('stage', query.stage);
  for (const f of filters) {
    params.append('fk', f.key);
    params.append('fv', f.value);
  }
  params.set('before', before);
  return `/console/leads?${params}`;
}

export function leadRoutes(
  app: FastifyInstance,
  deps: { store: Store; rules: RulesHolder },
  h: { signedIn(request: FastifyRequest, reply: FastifyReply): Viewer | null },
): void {
  const leadDeps = { store: deps.store, rules: () => deps.rules.current() };

  app.get('/console/leads', hidden, async (request, reply) => {
    const viewer = h.signedIn(request, reply);
    if (viewer === null) return reply;
    const rules = deps.rules.current();
    const query = parsedQuery(LeadsPageQuerySchema, request.query);
    const ws = workspaceFor(rules, viewer, query.workspace);
    const integrations = [...rules.integrations.values()].filter((i) => i.workspace.id === ws.id);
    const filters = query.fk
      .map((key, n) => ({ key, value: query.fv[n] ?? '' }))
      .filter((f) => f.key !== '' && f.value !== '');
    const workspaces = viewer.workspace === null ? [...rules.workspaces.values()] : [ws];
    const page = { title: 'Leads', ws, workspaces, integrations, query, filters, rows: FIELD_FILTER_ROWS };
    // Only this workspace's integrations: a handle from another is as unknown as one that never was.
    if (
      query.integration !== undefined &&
      !integrations.some((i) => i.handle === query.integration || i.id === query.integration)
    ) {
      return render(reply.code(404), 'leads', {
        ...page,
        items: [],
        nextHref: null,
        error: `No integration "${query.integration}" in ${ws.name}.`,
      });
    }
    let result;
    try {
      result = await listLeads(leadDeps, {
        workspace: ws.id,
        integration: query.integration,
        stage: query.stage,
        fields: filters.map((f) => `${f.key}:${f.value}`),
        before: query.before,
        limit: LEADS_PAGE_SIZE,
      });
    } catch (error) {
      // A filter the field's type cannot take (a word for a number field, say) is said on the form.
      if (!(error instanceof AppError) || (error.code !== 'validation-failed' && error.code !== 'not-found'))
        throw error;
      return render(reply.code(error.code === 'not-found' ? 404 : 400), 'leads', {
        ...page,
        items: [],
        nextHref: null,
        error: error.message,
      });
    }
    return render(reply, 'leads', {
      ...page,
      items: result.items,
      nextHref: result.next_before === null ? null : nextPage(ws, query, filters, result.next_before),
      error: null,
    });
  });

  app
    .withTypeProvider<ZodTypeProvider>()
    .get('/console/leads/:id', { schema: { hide: true, params: ConsoleLeadParamsSchema } }, async (request, reply) => {
      const viewer = h.signedIn(request, reply);
      if (viewer === null) return reply;
      const id = request.params.id;
      const rules = deps.rules.current();
      const found = await deps.store.snapshot(async (r) => {
        const lead = await r.leads.get(id);
        const ws = lead ? rules.workspaces.get(lead.workspaceId) : undefined;
        // Another workspace's lead is as absent as a lead that never was: its id tells nothing.
        if (!lead || !ws || lead.deletedAt !== null || (viewer.workspace !== null && ws.slug !== viewer.workspace))
          return null;
        return { ws, lead: await renderLead(r, ws, lead), values: await r.fieldValues.listForLead(id) };
      });
      if (found === null) throw new AppError('not-found', `No lead ${id}.`);
      const { ws, lead, values } = found;
      const fields = values.map((v) => {
        const writer =
          v.writtenBy.kind === 'integration' && v.writtenBy.ref !== null
            ? (rules.findIntegration(v.writtenBy.ref)?.handle ?? v.writtenBy.ref)
            : v.writtenBy.ref;
        return {
          name: ws.fieldsById.get(v.fieldId)?.name ?? v.fieldId,
          value: fieldValueText(ws, v),
          writer: { kind: v.writtenBy.kind, ref: writer },
          updatedAt: v.updatedAt,
        };
      });
      return render(reply, 'lead', {
        title: `${lead.first_name} ${lead.last_name ?? ''}`.trim(),
        ws,
        lead,
        fields,
        stage: lead.stage === null ? null : (ws.stages.get(lead.stage) ?? null),
      });
    });
}
