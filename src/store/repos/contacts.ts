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
  findByPhone(workspaceId: string, phone: string): Promise<Contact | null>;
  findByEmail(workspaceId: string, email: string): Promise<Contact | null>;
  insert(contact: Contact): Promise<void>;
  /** Fills only the members that are empty on the stored contact. */
  fillEmpty(id: string, fill: ContactFill, at: string): Promise<void>;
  /**
   * Binds the external_contact_id to the contact; false when it is bound already (to whichever
   * person), and nothing changed. A caller holding the person lock of that binding knows which.
   */
  bind(integrationId: string, externalContactId: string, contactId: string, at: string): Promise<boolean>;
}
