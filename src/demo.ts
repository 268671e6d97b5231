// Demo mode: well-known keys for the first example integration, so a newcomer can call both APIs at
// once; outside demo mode the same keys are revoked at start, so a demo database never opens a door.
import type { Store } from './store/store.js';
import type { Integration, Rules } from './rules/catalog.js';
import { hashKey } from './migration/keys.js';
import type { ApiKey } from './store/repos/keys.js';
import { importLegacyKey, issueV1Key, revokeKey } from './migration/service.js';
import type { MigrationState } from './store/repos/states.js';
import type { UsageRecorder } from './migration/usage.js';

export const DEMO_V1_KEY = 'lgv1_demo-v1-key-not-for-production';
export const DEMO_LEGACY_KEY = 'lgbot_demo-legacy-key-not-for-production';
/** The published keys' hashes: refused by the authenticators outside demo mode (app.ts). */
export const DEMO_KEY_HASHES: ReadonlySet<string> = new Set([hashKey(DEMO_V1_KEY), hashKey(DEMO_LEGACY_KEY)]);
const DEMO_ACTOR = { actor: 'demo-mode', reason: 'demo mode: published keys for a first call' };

/** What the banner prints of one demo key: the key while it works, else what became of it. */
export type DemoKeyStatus = { live: true; secret: string } | { live: false; revokedAt: string; liveKeys: string[] };

export interface DemoCredentials {
  integration: string;
  state: MigrationState;
  v1: DemoKeyStatus;
  legacy: DemoKeyStatus;
}

const findByHash = (store: Store, secret: string) => store.readOne((r) => r.keys.findByHash(hashKey(secret)));

async function statusOf(store: Store, integration: Integration, key: ApiKey, secret: string): Promise<DemoKeyStatus> {
  if (key.revokedAt === null) return { live: true, secret };
  const keys = await store.readOne((r) => r.keys.listForIntegration(integration.id));
  const liveKeys = keys.filter((k) => k.revokedAt === null && k.kind === key.kind).map((k) => `${k.prefix || k.id}…`);
  return { live: false, revokedAt: key.revokedAt, liveKeys };
}

/**
 * Gives the first integration of the rules the demo legacy key (state legacy), then the demo v1 key
 * through the same step the service team takes (legacy -> migrating), unless they exist already. A
 * demo key revoked since (a renewal) stays revoked: the banner then says so instead of printing it.
 */
export async function ensureDemoKeys(
  store: Store,
  usage: UsageRecorder,
  rules: Rules,
): Promise<DemoCredentials | null> {
  const integration = rules.integrations.values().next().value;
  if (!integration) return null;
  const deps = { store, usage };
  let legacy = await findByHash(store, DEMO_LEGACY_KEY);
  legacy ??= await importLegacyKey(deps, integration, { key: DEMO_LEGACY_KEY, ...DEMO_ACTOR });
  let v1 = await findByHash(store, DEMO_V1_KEY);
  v1 ??= (await issueV1Key(deps, integration, DEMO_ACTOR, { secret: DEMO_V1_KEY })).key;
  return {
    integration: integration.handle,
    state: await store.readOne((r) => r.states.get(integration.id)),
    v1: await statusOf(store, integration, v1, DEMO_V1_KEY),
    legacy: await statusOf(store, integration, legacy, DEMO_LEGACY_KEY),
  };
}

/** Outside demo mode: revokes every live demo key (they are published), audited; returns how many. */
export async function revokeDemoKeys(store: Store, usage: UsageRecorder): Promise<number> {
  let revoked = 0;
  for (const secret of [DEMO_V1_KEY, DEMO_LEGACY_KEY]) {
    const key = await findByHash(store, secret);
    if (key === null || key.revokedAt !== null) continue;
    await revokeKey({ store, usage }, { id: key.integrationId }, key.id, {
      actor: 'startup',
      reason: 'demo keys are published and never work outside demo mode',
    });
    revoked++;
  }
  return revoked;
}
