// Custom field values in SQLite: every statement shared (src/store/statements/field-values.ts); several
// fields are read one at a time.
import type { Db } from '../connection.js';
import { prepareShared } from '../shared.js';
import type { FieldValueRepo } from '../../repos/field-values.js';
import {
  rowToFieldValue as decodedRowToFieldValue,
  type FieldValueRow as DecodedFieldValueRow,
} from '../../sql-rows.js';
import { fieldValueStatements as shared } from '../../statements/field-values.js';

/** The row as SQLite holds it: the flag as 0 or 1, the selected options as JSON text. */
type FieldValueRow = Omit<DecodedFieldValueRow, 'boolean_value' | 'selected_options'> & {
  boolean_value: number | null;
  selected_options: string | null;
};

const rowToFieldValue = (r: FieldValueRow) =>
  decodedRowToFieldValue({
    ...r,
    boolean_value: r.boolean_value === null ? null : r.boolean_value === 1,
    selected_options: r.selected_options === null ? null : (JSON.parse(r.selected_options) as string[]),
  });

export function sqliteFieldValueRepo(db: Db): FieldValueRepo {
  const get = prepareShared<FieldValueRow>(db, shared.get);
  const list = prepareShared<FieldValueRow>(db, shared.list);
  const put = prepareShared(db, shared.put);
  return {
    get: async (leadId, fieldId) => {
      const row = get.get(leadId, fieldId);
      return row ? rowToFieldValue(row) : null;
    },
    getMany: async (leadId, fieldIds) =>
      [...new Set(fieldIds)].flatMap((fieldId) => get.all(leadId, fieldId).map(rowToFieldValue)),
    listForLead: async (leadId) => list.all(leadId).map(rowToFieldValue),
    put: async (v) =>
      void put.run(
        v.id,
        v.leadId,
        v.fieldId,
        v.text,
        v.decimal,
        v.bool === null ? null : v.bool ? 1 : 0,
        v.date,
        v.datetime,
        v.optionId,
        v.optionIds.length === 0 ? null : JSON.stringify(v.optionIds),
        v.writtenBy.kind,
        v.writtenBy.ref,
        v.updatedAt,
      ),
  };
}
