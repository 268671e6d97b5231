// Contacts and their bindings in PostgreSQL.
import type { ContactRepo, MatchedKey } from '../../repos/contacts.js';
import { rowToContact, type ContactRow } from '../../sql-rows.js';
import { rowName, statement, type Sql } from '../sql.js';

export const CONTACT_COLUMNS = ['id', 'workspace_id', 'first_name', 'last_name', 'phone', 'email', 'created_at', 'updated_at'] as const;
const columns = CONTACT_COLUMNS.map((c) => `c.${c}`).join(', ');
const get = statement<ContactRow>('contacts.get', `SELECT ${columns} FROM contacts c WHERE c.id = $1`);
const lock = statement<ContactRow>('contacts.lock', `SELECT ${columns} FROM contacts c WHERE c.id = $1 FOR NO KEY UPDATE`);
const byBinding = statement<ContactRow>(
  'contacts.byBinding',
  `SELECT ${columns} FROM contact_bindings b JOIN contacts c ON c.id = b.contact_id WHERE b.integration_id = $1 AND b.external_contact_id = $2`,
);
// Several persons may share a phone or e-mail; the most recently active one is the match (ties: the
// newest row, as ids are time-ordered).
// The three look-ups above as one statement: each branch keeps its own order and limit, a key not
// given ($n IS NULL) finds nothing, and the first branch that finds a person wins.
/** The person the keys find, with the key that found it (`$1` workspace, `$2` integration, `$3` external id, `$4` phone, `$5` e-mail's matching form). */
export const MATCH_SQL = `SELECT * FROM (
     (SELECT 1 AS priority, 'binding' AS matched_by, ${columns} FROM contact_bindings b JOIN contacts c ON c.id = b.contact_id
        WHERE b.integration_id = $2 AND b.external_contact_id = $3)
     UNION ALL
     (SELECT 2, 'phone', ${columns} FROM contacts c WHERE c.workspace_id = $1 AND c.phone = $4 ORDER BY c.updated_at DESC, c.id DESC LIMIT 1)
     UNION ALL
     (SELECT 3, 'email', ${columns} FROM contacts c WHERE c.workspace_id = $1 AND c.email_norm = $5 ORDER BY c.updated_at DESC, c.id DESC LIMIT 1)
   ) AS found ORDER BY priority LIMIT 1`;
const match = statement<ContactRow & { matched_by: MatchedKey }>('contacts.match', MATCH_SQL);
const insert = statement(
  'contacts.insert',
  `INSERT INTO contacts (id, workspace_id, first_name, last_name, phone, email, email_norm, created_at, updated_at)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
);
const fill = statement(
  'contacts.fill',
  `UPDATE contacts SET last_name = coalesce(last_name, $2), phone = coalesce(phone, $3), email = coalesce(email, $4),
     email_norm = coalesce(email_norm, $5), updated_at = $6
   WHERE id = $1`,
);
// A binding made under its person lock (bindNew) is never there already: one that is fails the unit
// (a unique violation, 23505) rather than losing the binding.
const bindNew = statement(
  'contacts.bindNew',
  'INSERT INTO contact_bindings (integration_id, external_contact_id, contact_id, created_at) VALUES ($1, $2, $3, $4)',
);
const bind = statement(
  'contacts.bind',
  `INSERT INTO contact_bindings (integration_id, external_contact_id, contact_id, created_at) VALUES ($1, $2, $3, $4)
   ON CONFLICT (integration_id, external_contact_id) DO NOTHING`,
);

/**
 * The matching form of an e-mail, made in JavaScript as SQLite's engine makes it (lower case): the
 * server's lower() depends on the database's locale.
 */
export const norm = (email: string | null | undefined): string | null => (email == null ? null : email.toLowerCase());

export function pgContactRepo(sql: Sql): ContactRepo {
  const one = (row: ContactRow | null) => (row ? rowToContact(row) : null);
  return {
    get: async (id) => one(await get.one(sql, id)),
    lock: async (id) => one(await lock.one(sql, id)),
    findByBinding: async (integrationId, externalId) => one(await byBinding.one(sql, integrationId, externalId)),
    match: async (workspaceId, integrationId, k) => {
      const row = await match.one(sql, workspaceId, integrationId, k.externalId, k.phone, norm(k.email));
      return row ? { contact: rowToContact(row), by: row.matched_by } : null;
    },
    insert: (c) => insert.later(sql, [rowName('contacts', c.id)], c.id, c.workspaceId, c.firstName, c.lastName, c.phone, c.email, norm(c.email), c.createdAt, c.updatedAt),
    fillEmpty: (id, f, at) => fill.later(sql, [rowName('contacts', id)], id, f.lastName ?? null, f.phone ?? null, f.email ?? null, norm(f.email), at),
    bind: async (integrationId, externalId, contactId, at) => (await bind.run(sql, integrationId, externalId, contactId, at)).rowCount === 1,
    bindNew: (integrationId, externalId, contactId, at) =>
      bindNew.later(sql, [rowName('contact_bindings', integrationId, externalId)], integrationId, externalId, contactId, at),
  };
}
