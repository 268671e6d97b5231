// API keys, stored only as a SHA-256 hash with a short readable prefix.

export type KeyKind = 'v1' | 'legacy';

export interface ApiKey {
  id: string;
  integrationId: string;
  kind: KeyKind;
  prefix: string;
  hash: string;
  createdAt: string;
  createdBy: string;
  revokedAt: string | null;
}

export interface KeyRepo {
  findByHash(hash: string): Promise<ApiKey | null>;
  /**
   * Inserts the key; false when a key with the same hash exists, and nothing changed. The database's
   * uniqueness decides, so of two writers inserting one key at once exactly one gets true.
   */
  insert(key: ApiKey): Promise<boolean>;
  listForIntegration(integrationId: string): Promise<ApiKey[]>;
  /** Revokes every live key of the integration; returns how many. */
  revokeAll(integrationId: string, at: string): Promise<number>;
  /** Revokes one key if it is live; false when it was revoked already. */
  revoke(id: string, at: string): Promise<boolean>;
}
