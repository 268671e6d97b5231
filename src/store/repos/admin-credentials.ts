// Named admin credentials: an operator's personal token, stored only as a SHA-256 hash.

export interface AdminCredential {
  id: string;
  /** The operator the audit log names for every change made with this credential. */
  name: string;
  prefix: string;
  hash: string;
  createdAt: string;
  createdBy: string;
  revokedAt: string | null;
}

export interface AdminCredentialRepo {
  findByHash(hash: string): Promise<AdminCredential | null>;
  findById(id: string): Promise<AdminCredential | null>;
  insert(credential: AdminCredential): Promise<void>;
  list(): Promise<AdminCredential[]>;
  /** Revokes every live credential of a name; returns how many. */
  revokeByName(name: string, at: string): Promise<number>;
}
