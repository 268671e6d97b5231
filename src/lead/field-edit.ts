// Field values set by someone other than an integration (employee, import, automation): the CRM side.
import type { Store } from '../store/store.js';
import { AppError } from '../errors.js';
import type { Rules } from '../rules/catalog.js';
import { renderLead } from './view.js';
import type { LeadObject } from './schemas.js';
import { coerce } from './coerce.js';
import { writeField } from './field-write.js';
import type { Writer } from '../store/repos/field-values.js';

export interface FieldEdit {
  leadId: string;
  fieldKey: string;
  value: unknown;
  writer: Writer & { kind: 'employee' | 'import' | 'automation' };
}

/** Sets a lead's field as the given writer. People and their tools edit freely: their value always lands. */
export async function setFieldValue(
  deps: { store: Store; rules: () => Rules },
  edit: FieldEdit,
): Promise<{ outcome: 'written' | 'unchanged'; lead: LeadObject }> {
  const rules = deps.rules();
  return deps.store.transact(async (tx) => {
    // Locked: the conflict rule reads the stored value, then writes (lead/field-write.ts).
    const lead = await tx.leads.lock(edit.leadId);
    const ws = lead ? rules.workspaces.get(lead.workspaceId) : undefined;
    if (!lead || !ws || lead.deletedAt !== null) throw new AppError('not-found', `No lead ${edit.leadId}.`);
    const field = ws.fields.get(edit.fieldKey);
    if (!field) throw new AppError('not-found', `No custom field "${edit.fieldKey}" in workspace ${ws.slug}.`);
    if (edit.writer.kind === 'employee' && (edit.writer.ref === null || !ws.usersByName.has(edit.writer.ref))) {
      throw new AppError('validation-failed', `No user "${String(edit.writer.ref)}" in workspace ${ws.slug}.`, {
        errors: [{ path: '/written_by/ref', message: 'is not a username of the lead’s workspace' }],
      });
    }
    const coerced = coerce(field, edit.value);
    if (!coerced.ok) {
      throw new AppError('validation-failed', coerced.error, { errors: [{ path: '/value', message: coerced.error }] });
    }
    const at = new Date().toISOString();
    const outcome = await writeField(tx, { leadId: lead.id, fieldId: field.id, at }, coerced.data, edit.writer, true);
    return { outcome: outcome === 'unchanged' ? 'unchanged' : 'written', lead: await renderLead(tx, ws, lead) };
  });
}
