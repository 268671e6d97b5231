// Contacts (persons) and their per-integration external_contact_id bindings.

export interface Contact {
  id: string;
  workspaceId: string;
  firstName: string;
  lastName: string | null;
  phone: string | null;
  email: string | null;
  createdAt: string;
  updatedAt: string;
}

/** The keys a submitted person may be found by, in the matching form (normalized phone); null when not given. */
export interface PersonKeys {
  externalId: string | null;
  phone: string | null;
  email: string | null;
}

/** Which key found the person. */
export type MatchedKey = 'binding' | 'phone' | 'email';

export type ContactFill = Partial<Pick<Contact, 'lastName' | 'phone' | 'email'>>;

export interface ContactRepo {
  get(id: string): Promise<Contact | null>;
  /**
   * Reads the contact and locks its row until the unit ends (PostgreSQL: SELECT ... FOR NO KEY UPDATE, which
   * answers the row as the last writer committed it). The lock of a person whose leads a unit reads
   * and then writes: two such units run one after the other (ordered after the person keys, before a lead).
   */
  lock(id: string): Promise<Contact | null>;
  findByBinding(integrationId: string, externalContactId: string): Promise<Contact | null>;
  /**
   * The person the keys find, in the order docs/api.md ("Outcomes") gives: the integration's binding, then the phone, then
   * the e-mail (the most recently active person with the phone or the e-mail); null when none does.
   * PostgreSQL asks all three in one statement.
   */
  match(
    workspaceId: string,
    integrationId: string,
    keys: PersonKeys,
  ): Promise<{ contact: Contact; by: MatchedKey } | null>;
  insert(contact: Contact): Promise<void>;
  /** Fills only the members that are empty on the stored contact. */
  fillEmpty(id: string, fill: ContactFill, at: string): Promise<void>;
  /**
   * Binds the external_contact_id to the contact; false when it is bound already (to whichever
   * person), and nothing changed. A caller holding the person lock of that binding knows which.
   */
  bind(integrationId: string, externalContactId: string, contactId: string, at: string): Promise<boolean>;
  /**
   * Binds an external_contact_id the caller knows to be unbound, holding that binding's person lock.
   * Finding it bound fails the unit: at once, or (PostgreSQL, whose unit sends such writes together)
   * at the unit's next statement or its commit. Nothing of the unit then stands.
   */
  bindNew(integrationId: string, externalContactId: string, contactId: string, at: string): Promise<void>;
}
