// Contacts and their bindings in PostgreSQL: the shared statements (src/store/statements/contacts.ts),
// the row lock, the match (the database's function), the insert and fill (the e-mail's matching form
// made in JavaScript) and the binding made under its person lock.
import type { ContactRepo, MatchedKey } from '../../repos/contacts.js';
import { rowToContact, type ContactRow } from '../../sql-rows.js';
import { contactColumns as columns, contactStatements as shared } from '../../statements/contacts.js';
import { rowName, sharedStatement, statement, type Sql } from '../sql.js';
import { brokenBinding } from '../../store.js';

const get = sharedStatement<ContactRow>(shared.get);
const lock = statement<ContactRow>(
  'contacts.lock',
  `SELECT ${columns} FROM contacts c WHERE c.id = $1 FOR NO KEY UPDATE`,
);
// A binding whose person is not there comes with its id alone, told by `checkBound`.
const byBinding = sharedStatement<BoundRow>(shared.byBinding);

/** A binding's row with its person, or with the id alone when the person's row is not there. */
export type BoundRow = (ContactRow | { id: null }) & { bound_contact_id: string | null };

/** The row, unless it is a binding whose person the store does not hold: then the broken reference. */
export function checkBound<R extends { id: string | null; bound_contact_id?: string | null }>(
  row: R | null,
  integrationId: string,
  externalId: string | null,
): R | null {
  if (row && row.id === null && row.bound_contact_id != null && externalId !== null)
    throw brokenBinding(integrationId, externalId, row.bound_contact_id);
  return row;
}
// The person the keys find, with the key that found it: the binding, else the phone, else the e-mail's
// matching form; several persons may share a phone or e-mail, and the most recently active one is the
// match (ties: the newest row, as ids are time-ordered). A binding whose person is not there wins as a
// binding with its id alone (`checkBound`). Written once, as the database's function of migration 23,
// for this look-up and for the unit's holds (holds.ts).
const match = statement<BoundRow & { matched_by: MatchedKey }>(
  'contacts.match',
  'SELECT * FROM lead_gateway_match($1, $2, $3, $4, $5)',
);
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
const bind = sharedStatement(shared.bind);

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
    findByBinding: async (integrationId, externalId) => {
      const row = checkBound(await byBinding.one(sql, integrationId, externalId), integrationId, externalId);
      return row?.id ? rowToContact(row) : null;
    },
    match: async (workspaceId, integrationId, k) => {
      const row = checkBound(
        await match.one(sql, workspaceId, integrationId, k.externalId, k.phone, norm(k.email)),
        integrationId,
        k.externalId,
      );
      return row?.id ? { contact: rowToContact(row), by: row.matched_by } : null;
    },
    insert: (c) =>
      insert.later(
        sql,
        [rowName('contacts', c.id)],
        c.id,
        c.workspaceId,
        c.firstName,
        c.lastName,
        c.phone,
        c.email,
        norm(c.email),
        c.createdAt,
        c.updatedAt,
      ),
    fillEmpty: (id, f, at) =>
      fill.later(
        sql,
        [rowName('contacts', id)],
        id,
        f.lastName ?? null,
        f.phone ?? null,
        f.email ?? null,
        norm(f.email),
        at,
      ),
    bind: async (integrationId, externalId, contactId, at) =>
      (await bind.run(sql, integrationId, externalId, contactId, at)).rowCount === 1,
    bindNew: (integrationId, externalId, contactId, at) =>
      bindNew.later(
        sql,
        [rowName('contact_bindings', integrationId, externalId)],
        integrationId,
        externalId,
        contactId,
        at,
      ),
  };
}
