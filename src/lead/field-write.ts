// Writing a lead's custom field value with its provenance: the one conflict rule every writer obeys
// (integrations through the answers engine, employees, imports and automations through field edits).
import type { Repos } from '../store/store.js';
import type { FieldData, FieldValue, Writer } from '../store/repos/field-values.js';
import { newId } from '../store/ids.js';
import { sameData } from './coerce.js';

export type WriteOutcome = 'written' | 'unchanged' | 'kept_existing';

const sameWriter = (a: Writer, b: Writer) => a.kind === b.kind && a.ref === b.ref;

/**
 * The one conflict rule. The same value is `unchanged` whoever wrote it. A value written by anyone
 * else (employee, import, automation, another integration) is kept unless `overwriteOthers` (the
 * field's `integration_wins` policy, or an employee's own edit). Otherwise the value is written and
 * remembers its writer. The caller holds the lead's lock (`leads.lock`): two writers of one field then
 * decide one after the other, and the second sees the first's value. `known` holds the lead's values
 * of some fields as read under that lock (null: none), to decide on without another read; a write
 * here keeps it current.
 */
export async function writeField(
  tx: Repos,
  target: { leadId: string; fieldId: string; at: string },
  data: FieldData,
  writer: Writer,
  overwriteOthers: boolean,
  known?: Map<string, FieldValue | null>,
): Promise<WriteOutcome> {
  const existing = known?.has(target.fieldId)
    ? known.get(target.fieldId)!
    : await tx.fieldValues.get(target.leadId, target.fieldId);
  if (existing && sameData(existing, data)) return 'unchanged';
  if (existing && !sameWriter(existing.writtenBy, writer) && !overwriteOthers) return 'kept_existing';
  const value: FieldValue = {
    id: existing?.id ?? newId(),
    leadId: target.leadId,
    fieldId: target.fieldId,
    ...data,
    writtenBy: writer,
    updatedAt: target.at,
  };
  await tx.fieldValues.put(value);
  known?.set(target.fieldId, value);
  return 'written';
}
