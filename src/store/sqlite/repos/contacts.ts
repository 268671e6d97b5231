// Contacts and their bindings in SQLite: the shared statements (src/store/statements/contacts.ts), the
// look-ups by phone and e-mail (ties by rowid), and the insert and fill, which lower the e-mail in SQL.
import type { Db } from '../connection.js';
import { prepareShared } from '../shared.js';
import type { ContactRepo, MatchedKey } from '../../repos/contacts.js';
import { rowToContact, type ContactRow } from '../../sql-rows.js';
import { contactStatements as shared } from '../../statements/contacts.js';
import { brokenBinding } from '../../store.js';

/** A binding with its person, or with the id alone when the person's row is not there. */
type BoundRow = (ContactRow | { id: null }) & { bound_contact_id: string };

const columns = 'id, workspace_id, first_name, last_name, phone, email, created_at, updated_at';

export function sqliteContactRepo(db: Db): ContactRepo {
  const get = prepareShared<ContactRow>(db, shared.get);
  // The binding's person comes with it, or its id alone when the store does not hold it (a broken
  // reference: told, never passed over as no binding, which would bind the id again and fail).
  const byBinding = prepareShared<BoundRow>(db, shared.byBinding);
  const bound = (integrationId: string, externalId: string): ContactRow | undefined => {
    const row = byBinding.get(integrationId, externalId);
    if (row && row.id === null) throw brokenBinding(integrationId, externalId, row.bound_contact_id);
    return row;
  };
  // Several persons may share a phone or e-mail; the most recently active one is the match.
  const byPhone = db.prepare<[string, string], ContactRow>(
    `SELECT ${columns} FROM contacts WHERE workspace_id = ? AND phone = ? ORDER BY updated_at DESC, rowid DESC LIMIT 1`,
  );
  const byEmail = db.prepare<[string, string], ContactRow>(
    `SELECT ${columns} FROM contacts WHERE workspace_id = ? AND email_norm = ? ORDER BY updated_at DESC, rowid DESC LIMIT 1`,
  );
  const insert = db.prepare(
    `INSERT INTO contacts (id, workspace_id, first_name, last_name, phone, email, email_norm, created_at, updated_at)
     VALUES (@id, @workspaceId, @firstName, @lastName, @phone, @email, lower(@email), @createdAt, @updatedAt)`,
  );
  const fill = db.prepare(
    `UPDATE contacts SET
       last_name = coalesce(last_name, @lastName),
       phone = coalesce(phone, @phone),
       email = coalesce(email, @email),
       email_norm = coalesce(email_norm, lower(@email)),
       updated_at = @at
     WHERE id = @id`,
  );
  const bind = prepareShared(db, shared.bind);
  const one = (row: ContactRow | undefined) => (row ? rowToContact(row) : null);
  const found = (row: ContactRow | undefined, by: MatchedKey) => (row ? { contact: rowToContact(row), by } : null);
  return {
    match: async (workspaceId, integrationId, k) =>
      (k.externalId === null ? null : found(bound(integrationId, k.externalId), 'binding')) ??
      (k.phone === null ? null : found(byPhone.get(workspaceId, k.phone), 'phone')) ??
      (k.email === null ? null : found(byEmail.get(workspaceId, k.email.toLowerCase()), 'email')),
    get: async (id) => one(get.get(id)),
    // One writer: the unit that reads the row is the only one that can write it (locks.ts).
    lock: async (id) => one(get.get(id)),
    findByBinding: async (integrationId, externalId) => one(bound(integrationId, externalId)),
    insert: async (contact) => void insert.run(contact),
    fillEmpty: async (id, f, at) =>
      void fill.run({ id, at, lastName: f.lastName ?? null, phone: f.phone ?? null, email: f.email ?? null }),
    bind: async (integrationId, externalId, contactId, at) =>
      bind.run(integrationId, externalId, contactId, at).changes === 1,
    bindNew: async (integrationId, externalId, contactId, at) => {
      if (bind.run(integrationId, externalId, contactId, at).changes === 0) {
        throw new Error(`external_contact_id ${externalId} was bound by a unit that did not lock it`);
      }
    },
  };
}
