// Custom field values: the statements both engines run as written. Reading several fields at once is
// each engine's own (an array parameter on PostgreSQL; one read per field on SQLite).
import { statements } from './shared.js';

export const fieldValueStatements = statements('fieldValues', {
  get: 'SELECT * FROM custom_field_values WHERE lead_id = $1 AND field_id = $2',
  list: 'SELECT * FROM custom_field_values WHERE lead_id = $1 ORDER BY field_id',
  // `boolean_value` ($6) is 0 or 1 on SQLite and a boolean on PostgreSQL: each engine hands over its own.
  put: `INSERT INTO custom_field_values (id, lead_id, field_id, text_value, decimal_value, boolean_value, date_value,
     datetime_value, option_id, selected_options, written_by_kind, written_by_ref, updated_at)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
   ON CONFLICT (lead_id, field_id) DO UPDATE SET
     text_value = excluded.text_value, decimal_value = excluded.decimal_value, boolean_value = excluded.boolean_value,
     date_value = excluded.date_value, datetime_value = excluded.datetime_value, option_id = excluded.option_id,
     selected_options = excluded.selected_options, written_by_kind = excluded.written_by_kind,
     written_by_ref = excluded.written_by_ref, updated_at = excluded.updated_at`,
});
