// Custom field values in PostgreSQL.
import type { FieldValueRepo } from '../../repos/field-values.js';
import { rowToFieldValue, type FieldValueRow } from '../../sql-rows.js';
import { rowName, statement, type Sql } from '../sql.js';

const get = statement<FieldValueRow>(
  'fieldValues.get',
  'SELECT * FROM custom_field_values WHERE lead_id = $1 AND field_id = $2',
);
const many = statement<FieldValueRow>(
  'fieldValues.many',
  'SELECT * FROM custom_field_values WHERE lead_id = $1 AND field_id = ANY($2::text[])',
);
const list = statement<FieldValueRow>(
  'fieldValues.list',
  'SELECT * FROM custom_field_values WHERE lead_id = $1 ORDER BY field_id',
);
const put = statement(
  'fieldValues.put',
  `INSERT INTO custom_field_values (id, lead_id, field_id, text_value, decimal_value, boolean_value, date_value,
     datetime_value, option_id, selected_options, written_by_kind, written_by_ref, updated_at)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
   ON CONFLICT (lead_id, field_id) DO UPDATE SET
     text_value = excluded.text_value, decimal_value = excluded.decimal_value, boolean_value = excluded.boolean_value,
     date_value = excluded.date_value, datetime_value = excluded.datetime_value, option_id = excluded.option_id,
     selected_options = excluded.selected_options, written_by_kind = excluded.written_by_kind,
     written_by_ref = excluded.written_by_ref, updated_at = excluded.updated_at`,
);

export function pgFieldValueRepo(sql: Sql): FieldValueRepo {
  return {
    get: async (leadId, fieldId) => {
      const row = await get.one(sql, leadId, fieldId);
      return row ? rowToFieldValue(row) : null;
    },
    getMany: async (leadId, fieldIds) =>
      fieldIds.length === 0 ? [] : (await many.rows(sql, leadId, [...new Set(fieldIds)])).map(rowToFieldValue),
    listForLead: async (leadId) => (await list.rows(sql, leadId)).map(rowToFieldValue),
    put: (v) =>
      put.later(
        sql,
        [rowName('custom_field_values', v.leadId, v.fieldId)],
        v.id,
        v.leadId,
        v.fieldId,
        v.text,
        v.decimal,
        v.bool,
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
