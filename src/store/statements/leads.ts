// Leads, their tags, comments and payments: the statements both engines run as written. Each engine
// keeps its own locks (PostgreSQL's FOR NO KEY UPDATE), orders of ties (SQLite's rowid), tags added
// (one statement of an array on PostgreSQL), comment caps and totals (bytes counted apart), counts
// (PostgreSQL's casts and striped counts), payment sums, legacy lists and the statements it generates
// per shape (updates, filters, person-id templates).
import { patchColumns } from '../sql-rows.js';
import { statements } from './shared.js';

const insertColumns = ['id', 'workspace_id', 'contact_id', 'integration_id', 'origin'];

export const leadStatements = statements('leads', {
  get: 'SELECT * FROM leads WHERE id = $1',
  // Its values: the five columns above, then the patchable members in the order of `patchColumns`, then created_at.
  insert: `INSERT INTO leads (${[...insertColumns, ...Object.values(patchColumns), 'created_at'].join(', ')})
   VALUES (${Array.from({ length: insertColumns.length + Object.keys(patchColumns).length + 1 }, (_, i) => `$${i + 1}`).join(', ')})`,
  tagIds: 'SELECT tag_id FROM lead_tags WHERE lead_id = $1 ORDER BY tag_id',
  addComment:
    'INSERT INTO lead_comments (id, lead_id, body, author_kind, author_ref, created_at) VALUES ($1, $2, $3, $4, $5, $6)',
  addPayment: 'INSERT INTO lead_payments (id, lead_id, amount_minor, note, created_at) VALUES ($1, $2, $3, $4, $5)',
});
