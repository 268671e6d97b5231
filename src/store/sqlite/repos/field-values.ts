// Custom field values in SQLite.
import type { Db } from '../connection.js';
import type { FieldValueRepo } from '../../repos/field-values.js';
import {
  rowToFieldValue as decodedRowToFieldValue,
  type FieldValueRow as DecodedFieldValueRow,
} from '../../sql-rows.js';

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
  const get = db.prepare<[string, string], FieldValueRow>(
    'SELECT * FROM custom_field_values WHERE lead_id = ? AND field_id = ?',
  );
  const list = db.prepare<[string], FieldValueRow>(
    'SELECT * FROM custom_field_values WHERE lead_id = ? ORDER BY field_id',
  );
  const put = db.prepare(
    `INSERT INTO custom_field_values (id, lead_id, field_id, text_value, decimal_value, boolean_value, date_value,
       datetime_value, option_id, selected_options, written_by_kind, written_by_ref, updated_at)
     VALUES (@id, @leadId, @fieldId, @text, @decimal, @bool, @date, @datetime, @optionId, @optionIds, @kind, @ref, @updatedAt)
     ON CONFLICT (lead_id, field_id) DO UPDATE SET
       text_value = excluded.text_value, decimal_value = excluded.decimal_value, boolean_value = excluded.boolean_value,
       date_value = excluded.date_value, datetime_value = excluded.datetime_value, option_id = excluded.option_id,
       selected_options = excluded.selected_options, written_by_kind = excluded.written_by_kind,
       written_by_ref = excluded.written_by_ref, updated_at = excluded.updated_at`,
  );
  return {
    get: async (leadId, fieldId) => {
      const row = get.get(leadId, fieldId);
      return row ? rowToFieldValue(row) : null;
    },
    getMany: async (leadId, fieldIds) =>
      [...new Set(fieldIds)].flatMap((fieldId) => get.all(leadId, fieldId).map(rowToFieldValue)),
    listForLead: async (leadId) => list.all(leadId).map(rowToFieldValue),
    put: async (v) =>
      void put.run({
        id: v.id,
        leadId: v.leadId,
        fieldId: v.fieldId,
        text: v.text,
        decimal: v.decimal,
        bool: v.bool === null ? null : v.bool ? 1 : 0,
        date: v.date,
        datetime: v.datetime,
        optionId: v.optionId,
        optionIds: v.optionIds.length === 0 ? null : JSON.stringify(v.optionIds),
        kind: v.writtenBy.kind,
        ref: v.writtenBy.ref,
        updatedAt: v.updatedAt,
      }),
  };
}
