// A fingerprint of every row a request can write: any insert, update or delete changes it.
import type { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';

// The call counters (api_usage, ignored_fields) are left out: they count refused calls too, on
// purpose, for the migration report.
const TABLES = [
  'contacts', 'contact_bindings', 'leads', 'lead_tags', 'lead_comments', 'lead_payments', 'lead_counts', 'submissions',
  'answers', 'custom_field_values', 'api_keys', 'integration_states', 'audit_log', 'legacy_tags', 'integration_lead_counts',
];

export function snapshot(store: SqliteStore): string {
  return TABLES.map((t) => {
    const rows = JSON.stringify(store.db.prepare(`SELECT * FROM ${t} ORDER BY 1, 2`).raw().all());
    let h = 0;
    for (let i = 0; i < rows.length; i++) h = (Math.imul(h, 31) + rows.charCodeAt(i)) | 0;
    return `${t}:${rows.length}:${h}`;
  }).join('|');
}
