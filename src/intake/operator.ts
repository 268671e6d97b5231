// What operators do to leads in the CRM (move, close, reopen, delete), for the admin API.
import type { Store } from '../db/store.js';
import { AppError } from '../errors.js';
import type { Rules, Workspace } from '../rules/catalog.js';
import type { Lead, LeadPatch } from './lead-store.js';
import { renderLead } from './lead-view.js';
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
      return { closedAt: at, closedBy: user?.id ?? null, closeOutcome: action.outcome, closeReason: action.reason, updatedAt: at };
    }
    case 'reopen':
      return { closedAt: null, closedBy: null, closeOutcome: null, closeReason: null, updatedAt: at };
    case 'delete':
      return { deletedAt: lead.deletedAt ?? at, updatedAt: at };
  }
}

/** Applies an operator action; answers the lead as it is afterwards (null once deleted). */
export async function actOnLead(
  deps: { store: Store; rules: () => Rules },
  leadId: string,
  action: OperatorAction,
): Promise<LeadObject | null> {
  const rules = deps.rules();
  return deps.store.transact(async (tx) => {
    const lead = await tx.leads.get(leadId);
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
  return deps.store.read(async (r) => {
    const lead = await r.leads.get(leadId);
    const ws = lead ? rules.workspaces.get(lead.workspaceId) : undefined;
    if (!lead || !ws || lead.deletedAt !== null) throw new AppError('not-found', `No lead ${leadId}.`);
    return renderLead(r, ws, lead);
  });
}
