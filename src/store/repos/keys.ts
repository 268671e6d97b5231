// API keys, stored only as a SHA-256 hash with a short readable prefix.

/** `test`: v1's test mode, whose calls run the whole v1 path and keep nothing (docs/api.md, "Test mode"). */
export type KeyKind = 'v1' | 'legacy' | 'test';

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

/** A key as listed for people: with when it last authenticated a call (null: never, or not yet written). */
export interface ListedKey extends ApiKey {
  lastUsedAt: string | null;
}

export interface KeyRepo {
  findByHash(hash: string): Promise<ApiKey | null>;
  /**
   * Inserts the key; false when a key with the same hash exists, and nothing changed. The database's
   * uniqueness decides, so of two writers inserting one key at once exactly one gets true.
   */
  insert(key: ApiKey): Promise<boolean>;
  listForIntegration(integrationId: string): Promise<ListedKey[]>;
  /**
   * Records when keys last authenticated a call, each kept only if later than what is stored (replicas
   * flush in any order). In its own table: a write to api_keys would tell every replica's key cache.
   */
  markUsed(uses: readonly { keyId: string; at: string }[]): Promise<void>;
  /** Revokes every live key of the integration; returns how many. */
  revokeAll(integrationId: string, at: string): Promise<number>;
  /** Revokes one key if it is live; false when it was revoked already. */
  revoke(id: string, at: string): Promise<boolean>;
}
