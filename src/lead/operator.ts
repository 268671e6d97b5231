// What operators do to leads in the CRM (move, close, reopen, delete), for the admin API.
import type { Repos, Store } from '../store/store.js';
import { AppError } from '../errors.js';
import type { Rules, Workspace } from '../rules/catalog.js';
import type { FieldCondition, Lead, LeadPatch } from '../store/repos/leads.js';
import { coerce } from './coerce.js';
import { renderLead } from './view.js';
import type { LeadObject } from './schemas.js';

export type OperatorAction =
  | { kind: 'move'; stageId: string }
  | { kind: 'close'; outcome: string | null; reason: string | null; closedBy: string | null }
  | { kind: 'reopen' }
  | { kind: 'delete' };

function patchFor(ws: Workspace, lead: Lead, action: OperatorAction, at: string): LeadPatch {
  switch (action.kind) {
    case 'move':
      if (!ws.stages.has(action.stageId)) {
        throw new AppError('validation-failed', `Stage ${action.stageId} is not a stage of workspace ${ws.slug}.`, {
          errors: [{ path: '/stage', message: 'is not a stage of the lead’s workspace' }],
        });
      }
      return { stageId: action.stageId, updatedAt: at };
    case 'close': {
      const user = action.closedBy === null ? undefined : ws.usersByName.get(action.closedBy);
      if (action.closedBy !== null && !user) {
        throw new AppError('validation-failed', `No user "${action.closedBy}" in workspace ${ws.slug}.`, {
          errors: [{ path: '/closed_by', message: 'is not a user of the lead’s workspace' }],
        });
      }
      return {
        closedAt: at,
        closedBy: user?.id ?? null,
        closeOutcome: action.outcome,
        closeReason: action.reason,
        updatedAt: at,
      };
    }
    case 'reopen':
      return { closedAt: null, closedBy: null, closeOutcome: null, closeReason: null, updatedAt: at };
    case 'delete':
      return { deletedAt: lead.deletedAt ?? at, updatedAt: at };
  }
}

/**
 * Applies an operator action; answers the lead as it is afterwards (null once deleted). `guard`, when
 * given, checks the locked lead first, in the same unit (a bot's reach over its leads): whatever it
 * refuses by throwing is refused on the lead as the action finds it.
 */
export async function actOnLead(
  deps: { store: Store; rules: () => Rules },
  leadId: string,
  action: OperatorAction,
  guard?: (tx: Repos, lead: Lead | null) => Promise<unknown>,
): Promise<LeadObject | null> {
  const rules = deps.rules();
  return deps.store.transact(async (tx) => {
    // Locked: the action is decided on the lead as it is now, and another action on it waits.
    const lead = await tx.leads.lock(leadId);
    await guard?.(tx, lead);
    const ws = lead ? rules.workspaces.get(lead.workspaceId) : undefined;
    if (!lead || !ws || (lead.deletedAt !== null && action.kind !== 'delete')) {
      throw new AppError('not-found', `No lead ${leadId}.`);
    }
    const patch = patchFor(ws, lead, action, new Date().toISOString());
    await tx.leads.update(lead.id, patch);
    return action.kind === 'delete' ? null : renderLead(tx, ws, { ...lead, ...patch });
  });
}

export async function getLead(deps: { store: Store; rules: () => Rules }, leadId: string): Promise<LeadObject> {
  const rules = deps.rules();
  return deps.store.snapshot(async (r) => {
    const lead = await r.leads.get(leadId);
    const ws = lead ? rules.workspaces.get(lead.workspaceId) : undefined;
    if (!lead || !ws || lead.deletedAt !== null) throw new AppError('not-found', `No lead ${leadId}.`);
    return renderLead(r, ws, lead);
  });
}

export interface LeadQuery {
  workspace: string;
  stage?: string | undefined;
  integration?: string | undefined;
  /** `key:value` conditions on custom fields, values as answers would send them. */
  fields: string[];
  before?: string | undefined;
  limit: number;
}

/** Lists a workspace's leads for operators, filtered by stage, integration and custom field values. */
export async function listLeads(
  deps: { store: Store; rules: () => Rules },
  query: LeadQuery,
): Promise<{ items: LeadObject[]; next_before: string | null }> {
  const rules = deps.rules();
  const ws = [...rules.workspaces.values()].find((w) => w.slug === query.workspace || w.id === query.workspace);
  if (!ws) throw new AppError('not-found', `No workspace "${query.workspace}".`);
  const invalid = (path: string, message: string) =>
    new AppError('validation-failed', `${path}: ${message}`, { errors: [{ path, message }] });
  const conditions = query.fields.map((condition): FieldCondition => {
    const at = condition.indexOf(':');
    const field = at > 0 ? ws.fields.get(condition.slice(0, at)) : undefined;
    if (!field) throw invalid('/field', `"${condition}" is not key:value with a custom field key of ${ws.slug}`);
    const coerced = coerce(field, condition.slice(at + 1));
    if (!coerced.ok) throw invalid('/field', coerced.error);
    const d = coerced.data;
    if (d.bool !== null) return { fieldId: field.id, column: 'boolean_value', value: d.bool };
    if (d.optionIds.length > 0) return { fieldId: field.id, column: 'selected_options', value: d.optionIds };
    const [column, value] = (
      [
        ['text_value', d.text],
        ['decimal_value', d.decimal],
        ['date_value', d.date],
        ['datetime_value', d.datetime],
        ['option_id', d.optionId],
      ] as const
    ).find(([, v]) => v !== null)!;
    return { fieldId: field.id, column, value: value! };
  });
  const integrationId = query.integration === undefined ? undefined : rules.findIntegration(query.integration)?.id;
  if (query.integration !== undefined && integrationId === undefined)
    throw new AppError('not-found', `No integration "${query.integration}".`);
  return deps.store.snapshot(async (r) => {
    const leads = await r.leads.list({
      workspaceId: ws.id,
      stageId: query.stage,
      integrationId,
      fields: conditions,
      before: query.before,
      limit: query.limit,
    });
    return {
      items: await Promise.all(leads.map((lead) => renderLead(r, ws, lead))),
      next_before: leads.length === query.limit ? leads.at(-1)!.createdAt : null,
    };
  });
}
