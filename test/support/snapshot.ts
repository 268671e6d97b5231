// A fingerprint of every row a request can write: any insert, update or delete changes it.
import type { Store } from '../../src/store/store.js';
import { inspect } from './inspect.js';

// The call counters (api_usage, ignored_fields) are left out: they count refused calls too, on
// purpose, for the migration report.
const TABLES = [
  'contacts',
  'contact_bindings',
  'leads',
  'lead_tags',
  'lead_comments',
  'lead_payments',
  'lead_counts',
  'submissions',
  'answers',
  'custom_field_values',
  'api_keys',
  'integration_states',
  'audit_log',
  'legacy_tags',
  'integration_lead_counts',
];

export async function snapshot(store: Store): Promise<string> {
  const inspector = inspect(store);
  const parts: string[] = [];
  for (const t of TABLES) {
    const rows = JSON.stringify(await inspector.dump(t));
    let h = 0;
    for (let i = 0; i < rows.length; i++) h = (Math.imul(h, 31) + rows.charCodeAt(i)) | 0;
    parts.push(`${t}:${rows.length}:${h}`);
  }
  return parts.join('|');
}
