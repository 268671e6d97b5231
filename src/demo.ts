// Demo mode: well-known keys for the first example integration, so a newcomer can call the API at once.
import type { Store } from './db/store.js';
import type { Rules } from './rules/catalog.js';
import { hashKey, storeKey } from './migration/keys.js';

export const DEMO_V1_KEY = 'lgv1_demo-v1-key-not-for-production';

export interface DemoCredentials {
  integration: string;
  v1Key: string;
}

/** Imports the demo keys for the first integration of the rules unless they exist already. */
export async function ensureDemoKeys(store: Store, rules: Rules): Promise<DemoCredentials | null> {
  const integration = rules.integrations.values().next().value;
  if (!integration) return null;
  await store.transact(async (tx) => {
    if (!(await tx.keys.findByHash(hashKey(DEMO_V1_KEY)))) {
      await storeKey(tx, { integrationId: integration.id, kind: 'v1', createdBy: 'demo-mode', secret: DEMO_V1_KEY });
    }
  });
  return { integration: integration.handle, v1Key: DEMO_V1_KEY };
}
