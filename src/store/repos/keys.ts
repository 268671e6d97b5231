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
  insert(key: ApiKey): Promise<void>;
  listForIntegration(integrationId: string): Promise<ApiKey[]>;
  /** Revokes every live key of the integration; returns how many. */
  revokeAll(integrationId: string, at: string): Promise<number>;
  /** Revokes one key if it is live; false when it was revoked already. */
  revoke(id: string, at: string): Promise<boolean>;
}
