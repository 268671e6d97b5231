// Custom field values in PostgreSQL: the shared statements (src/store/statements/field-values.ts) and
// the read of several fields, one array parameter.
import type { FieldValueRepo } from '../../repos/field-values.js';
import { rowToFieldValue, type FieldValueRow } from '../../sql-rows.js';
import { fieldValueStatements as shared } from '../../statements/field-values.js';
import { rowName, sharedStatement, statement, type Sql } from '../sql.js';

const get = sharedStatement<FieldValueRow>(shared.get);
const many = statement<FieldValueRow>(
  'fieldValues.many',
  'SELECT * FROM custom_field_values WHERE lead_id = $1 AND field_id = ANY($2::text[])',
);
const list = sharedStatement<FieldValueRow>(shared.list);
const put = sharedStatement(shared.put);

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
