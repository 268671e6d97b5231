// Gateway replicas as child processes on one PostgreSQL database, and the calls the process tests of
// the migration calendar make through them: the admin API, the old interface, v1 with a live or a
// test key. Each replica is owned by the test that starts it (spawnGateway, owned.ts).
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { CHILD_ADMIN_TOKEN, spawnGateway, type ChildGateway } from './child-gateway.js';

/** The environment every replica of a set shares, on top of spawnGateway's defaults. */
export const replicaEnv = (databaseUrl: string, rulesDir?: string): Record<string, string> => ({
  DATABASE_URL: databaseUrl,
  RATE_LIMIT_PER_MINUTE: '1000000',
  ...(rulesDir === undefined ? {} : { RULES_DIR: rulesDir }),
});

/**
 * A replica whose clock is `ms` off (ahead when positive): test/support/skewed-clock.mjs preloaded,
 * as a machine clock set wrong. Its timers keep their pace.
 */
export const skewedClock = (ms: number) => ({
  nodeArgs: ['--import', pathToFileURL(join(import.meta.dirname, 'skewed-clock.mjs')).href],
  env: { TEST_CLOCK_SKEW_MS: String(ms) },
});

export interface ReplicaOptions {
  env: Record<string, string>;
  nodeArgs?: string[];
}

/** Starts one replica, its output kept for the test to read. */
export const startReplica = (options: ReplicaOptions): Promise<ChildGateway> =>
  spawnGateway({ env: options.env, capture: true, ...(options.nodeArgs ? { nodeArgs: options.nodeArgs } : {}) });

/** Starts `count` replicas at once (the schema migrated by one of them, under its advisory lock). */
export const startReplicas = (count: number, options: ReplicaOptions): Promise<ChildGateway[]> =>
  Promise.all(Array.from({ length: count }, () => startReplica(options)));

export interface Answer<T = Record<string, unknown>> {
  status: number;
  body: T;
  headers: Headers;
}

async function call<T = Record<string, unknown>>(url: string, init: RequestInit): Promise<Answer<T>> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(15_000) });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as T, headers: res.headers };
}

/** An admin API call with the shared token. */
export const admin = <T = Record<string, unknown>>(
  replica: ChildGateway,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  body?: unknown,
) =>
  call<T>(`${replica.address}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${CHILD_ADMIN_TOKEN}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

/** A call of the old interface with a legacy key (a read: it stores nothing). */
export const legacyCall = (replica: ChildGateway, key: string) =>
  call(`${replica.address}/api/bots/api/info/`, { headers: { 'x-bot-api-key': key } });

let sent = 0;
/** A new lead through v1, with a live or a test key. */
export const v1Lead = (replica: ChildGateway, key: string) => {
  const n = ++sent;
  return call(`${replica.address}/api/integrations/v1/leads/`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      event_id: `replicas-${process.pid}-${n}`,
      first_name: 'Lola',
      external_contact_id: `tg:${n}`,
    }),
  });
};

/** Issues a key (`keys`, `keys/test`) or imports a legacy one (`keys/import`); answers the secret. */
export async function keyFor(replica: ChildGateway, handle: string, kind: 'keys' | 'keys/test'): Promise<string>;
export async function keyFor(replica: ChildGateway, handle: string, kind: 'keys/import', key: string): Promise<string>;
export async function keyFor(replica: ChildGateway, handle: string, kind: string, key?: string): Promise<string> {
  const res = await admin<{ key?: string }>(
    replica,
    'POST',
    `/admin/v1/integrations/${handle}/${kind}`,
    key === undefined ? {} : { key },
  );
  if (res.status !== 201) throw new Error(`${kind} for ${handle}: ${res.status} ${JSON.stringify(res.body)}`);
  return key ?? res.body.key!;
}

export interface AuditEntry {
  action: string;
  actor: string;
  to_state: string | null;
  at: string;
  details: Record<string, unknown> | null;
}

/** The integration's audit log, newest first. */
export const auditOf = async (replica: ChildGateway, handle: string) =>
  (await admin<{ items: AuditEntry[] }>(replica, 'GET', `/admin/v1/integrations/${handle}/audit?limit=200`)).body.items;

/** Lines of a replica's output whose message is `msg`, parsed. */
export const logLines = (replica: ChildGateway, msg: string): Record<string, unknown>[] =>
  replica
    .output()
    .split('\n')
    .filter((line) => line.includes(`"msg":${JSON.stringify(msg)}`))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** Waits until `check` holds, looking every 100 ms; fails with `what` after `ms`. */
export async function until(what: string, check: () => Promise<boolean> | boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`not in ${ms} ms: ${what}`);
    await sleep(100);
  }
}
