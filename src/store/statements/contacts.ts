// Contacts and their bindings: the statements both engines run as written. Each engine keeps its own
// match (SQLite's look-ups by phone and e-mail order ties by rowid; PostgreSQL's is the database's
// function), insert and fill (SQLite lowers the e-mail in SQL; PostgreSQL takes the matching form made
// in JavaScript), and PostgreSQL its row lock and its binding that fails rather than find one there.
import { statements } from './shared.js';

/** A contact's columns, read through the alias `c`. */
export const contactColumns = [
  'id',
  'workspace_id',
  'first_name',
  'last_name',
  'phone',
  'email',
  'created_at',
  'updated_at',
]
  .map((c) => `c.${c}`)
  .join(', ');

export const contactStatements = statements('contacts', {
  get: `SELECT ${contactColumns} FROM contacts c WHERE c.id = $1`,
  // A binding's person comes with it, or its id alone (`bound_contact_id`, the person's columns null)
  // when the store does not hold it: a broken reference, told by each engine, never passed over as no
  // binding (which would bind the id again, and fail on the binding's key).
  byBinding: `SELECT b.contact_id AS bound_contact_id, ${contactColumns} FROM contact_bindings b LEFT JOIN contacts c ON c.id = b.contact_id
   WHERE b.integration_id = $1 AND b.external_contact_id = $2`,
  bind: `INSERT INTO contact_bindings (integration_id, external_contact_id, contact_id, created_at) VALUES ($1, $2, $3, $4)
   ON CONFLICT (integration_id, external_contact_id) DO NOTHING`,
});
