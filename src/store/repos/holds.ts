// What a unit decides a person's submission on, found and locked at once: the person, its latest lead,
// and the stored values of the fields its answers write (docs/architecture.md, "How a unit is sent on
// PostgreSQL"). The reads and locks are the ones a unit made one after the other before, in the same
// order (person, then its latest lead, then the values read under the lead's lock).
import type { Contact, ContactRepo, MatchedKey, PersonKeys } from './contacts.js';
import type { FieldValue, FieldValueRepo } from './field-values.js';
import type { Lead, LeadRepo } from './leads.js';
import { personKeysOf, type LockRepo } from './locks.js';

/** A submitted person, matched and held. */
export interface HeldPerson {
  /** The person the keys found (`contacts.match`); null when none did. */
  found: { contact: Contact; by: MatchedKey } | null;
  /** The found person's row, locked (`contacts.lock`): as the last writer committed it. */
  locked: Contact | null;
  /**
   * The found person's latest lead that was not deleted, locked (`leads.lockLatestOfContact`). It
   * comes back deleted when a unit that held its lock deleted it meanwhile: the caller looks again
   * (lead/lock.ts) and reads the values again.
   */
  latest: Lead | null;
  /** The stored values of the fields asked for, on `latest`, read once its lock was held. */
  values: FieldValue[];
}

/** A person found by its binding alone (no lock on its row), with its latest lead held as above. */
export interface HeldBinding {
  contact: Contact | null;
  latest: Lead | null;
  values: FieldValue[];
}

export interface HoldRepo {
  /**
   * Takes the locks of the person's keys (`locks.persons` on `personKeysOf`), matches the person, locks
   * its row, then its latest lead, then reads the values of `fieldIds` on that lead: each read starting
   * once the lock before it is held. One statement on PostgreSQL.
   */
  person(
    workspaceId: string,
    integrationId: string,
    keys: PersonKeys,
    fieldIds: readonly string[],
  ): Promise<HeldPerson>;
  /** The person bound to `externalId` by this integration, its latest lead locked, and the values of `fieldIds` on it. */
  binding(integrationId: string, externalId: string, fieldIds: readonly string[]): Promise<HeldBinding>;
}

/** The same reads, one after the other, for an engine where a read costs no round trip (SQLite). */
export function holdsInOrder(r: {
  contacts: ContactRepo;
  leads: LeadRepo;
  fieldValues: FieldValueRepo;
  locks: LockRepo;
}): HoldRepo {
  const latestWithValues = async (contactId: string, fieldIds: readonly string[]) => {
    const latest = await r.leads.lockLatestOfContact(contactId);
    const values = latest && fieldIds.length > 0 ? await r.fieldValues.getMany(latest.id, fieldIds) : [];
    return { latest, values };
  };
  return {
    async person(workspaceId, integrationId, keys, fieldIds) {
      await r.locks.persons(workspaceId, personKeysOf(integrationId, keys));
      const found = await r.contacts.match(workspaceId, integrationId, keys);
      if (!found) return { found: null, locked: null, latest: null, values: [] };
      const locked = await r.contacts.lock(found.contact.id);
      return { found, locked, ...(await latestWithValues(found.contact.id, fieldIds)) };
    },
    async binding(integrationId, externalId, fieldIds) {
      const contact = await r.contacts.findByBinding(integrationId, externalId);
      if (!contact) return { contact: null, latest: null, values: [] };
      return { contact, ...(await latestWithValues(contact.id, fieldIds)) };
    },
  };
}
