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
  findByBinding(integrationId: string, externalContactId: string): Promise<Contact | null>;
  findByPhone(workspaceId: string, phone: string): Promise<Contact | null>;
  findByEmail(workspaceId: string, email: string): Promise<Contact | null>;
  insert(contact: Contact): Promise<void>;
  /** Fills only the members that are empty on the stored contact. */
  fillEmpty(id: string, fill: ContactFill, at: string): Promise<void>;
  bind(integrationId: string, externalContactId: string, contactId: string, at: string): Promise<void>;
}
