// What the admin API and the console both read of an integration: its keys (by prefix, with their last
// use), its audit trail and its submissions that need review. One function each, so both surfaces list
// the same rows in the same order; each shapes them for its own answer.
import type { Integration } from '../rules/catalog.js';
import type { Store } from '../store/store.js';
import type { ListedKey } from '../store/repos/keys.js';
import type { AuditEntry } from '../store/repos/states.js';
import type { Submission } from '../store/repos/submissions.js';

/** Every key of the integration, live and revoked, never its value. */
export const listKeys = (store: Store, integration: Integration): Promise<ListedKey[]> =>
  store.snapshot((r) => r.keys.listForIntegration(integration.id));

/** The live keys of one kind (a second live v1 key is what the console asks to confirm). */
export const liveKeys = async (store: Store, integration: Integration, kind: ListedKey['kind']): Promise<ListedKey[]> =>
  (await listKeys(store, integration)).filter((k) => k.kind === kind && k.revokedAt === null);

/** The newest `limit` audit entries of one integration, or of every integration (null). */
export const listAudit = (store: Store, integration: Integration | null, limit: number): Promise<AuditEntry[]> =>
  store.snapshot((r) => r.states.listAudit(integration?.id ?? null, limit));

/** The newest `limit` submissions of the integration flagged for a person to review. */
export const listReview = (store: Store, integration: Integration, limit: number): Promise<Submission[]> =>
  store.snapshot((r) => r.submissions.listNeedingReview(integration.id, limit));
