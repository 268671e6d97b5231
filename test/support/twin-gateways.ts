// Two gateways on one database, as two replicas are: each its own app and its own store (SQLite: its
// own connections to one file; PostgreSQL: its own pool). Units and requests raced through both meet
// only in the database, so what holds here holds for replicas in separate processes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe } from 'vitest';
import { buildApp } from '../../src/app.js';
import { createRulesHolder } from '../../src/rules/loader.js';
import type { Store, StoreEngine } from '../../src/store/store.js';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.js';
import { ADMIN_TOKEN, EXAMPLE_RULES, type WebhookTestConfig } from '../helper.js';
import { inspect, type Inspector } from './inspect.js';
import { openStore } from '../../src/store/open-store.js';
import { clusterOrSkip, freshDatabase, type TestPostgres } from './postgres.js';

/** Connections of each PostgreSQL pool: enough for every request of a race to hold one at once. */
const POOL_SIZE = 8;

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface TwinGateways {
  engine: StoreEngine;
  apps: [FastifyInstance, FastifyInstance];
  stores: [Store, Store];
  inspect: Inspector;
  /** A request through gateway `i % 2`: spreading a race over both is `send(i, ...)` for i = 0..n. */
  send(
    i: number,
    method: Method,
    url: string,
    headers: Record<string, string>,
    body?: unknown,
  ): Promise<LightMyRequestResponse>;
  admin(i: number, method: Method, url: string, body?: unknown): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

async function startTwins(
  engine: StoreEngine,
  cluster: TestPostgres | null,
  rulesDir = EXAMPLE_RULES,
  webhooks: WebhookTestConfig = {},
): Promise<TwinGateways> {
  let dir: string | null = null;
  let stores: [Store, Store];
  if (engine === 'sqlite') {
    dir = mkdtempSync(join(tmpdir(), 'lead-gateway-twins-'));
    const file = { engine: 'sqlite', path: join(dir, 'gateway.db'), synchronous: 'FULL' } as const;
    stores = [await openStore(file), await openStore(file)];
  } else {
    const url = await freshDatabase(cluster!.url);
    stores = [
      await openPostgresStore({ url, poolSize: POOL_SIZE }),
      await openPostgresStore({ url, poolSize: POOL_SIZE }),
    ];
  }
  const rules = createRulesHolder(rulesDir);
  const apps = (await Promise.all(
    stores.map((store) =>
      buildApp({ adminToken: ADMIN_TOKEN, rateLimitPerMinute: 1_000_000, ...webhooks }, { store, rules }),
    ),
  )) as [FastifyInstance, FastifyInstance];
  const send: TwinGateways['send'] = (i, method, url, headers, body) =>
    apps[i % 2]!.inject({
      method,
      url,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
  return {
    engine,
    apps,
    stores,
    inspect: inspect(stores[0]),
    send,
    admin: (i, method, url, body) => send(i, method, url, { authorization: `Bearer ${ADMIN_TOKEN}` }, body),
    async close() {
      // Each app closes its own store.
      await Promise.all(apps.map((app) => app.close()));
      if (dir !== null) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Runs `body` on each engine with a pair of gateways on one fresh database: SQLite always, PostgreSQL
 * on a throwaway cluster when the machine has one (otherwise its half says it skipped, in one line).
 * `twins()` is null while the engine cannot run here; the tests then return early.
 */
export function onEachEngineTwice(
  body: (engine: StoreEngine, twins: () => TwinGateways | null) => void,
  rulesDir?: () => string,
  webhooks?: () => WebhookTestConfig,
): void {
  describe.each(['sqlite', 'postgres'] as const)('on %s', (engine) => {
    let cluster: TestPostgres | null = null;
    let twins: TwinGateways | null = null;
    beforeAll(async () => {
      if (engine === 'postgres') cluster = await clusterOrSkip();
      if (engine === 'sqlite' || cluster !== null)
        twins = await startTwins(engine, cluster, rulesDir?.(), webhooks?.());
    }, 60_000);
    afterAll(async () => {
      await twins?.close();
      await cluster?.stop();
    });
    body(engine, () => twins);
  });
}
