// Test helper: the real app on a fresh store, with keys issued through the admin API.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../src/app.js';
import type { Store } from '../src/store/store.js';
import { createRulesHolder, type RulesHolder } from '../src/rules/loader.js';
import { createLogger } from '../src/logging.js';
import type { ConnectionLimits, ConsoleConfig } from '../src/config.js';
import pino from 'pino';
import { expect, inject } from 'vitest';
import { secretsFoundIn } from './support/secrets.js';
import { recordResponses } from './support/contract.js';
import { inspect, type Inspector } from './support/inspect.js';
import { databaseEnv, openTestStore, storeContentFiles, testEngine } from './support/store.js';
import { openSharedLimiters } from '../src/rate-limit/shared-limiter.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';

/** What a test gateway may be told of webhooks (src/webhooks/sender.ts). */
export type WebhookTestConfig = Pick<
  Parameters<typeof buildApp>[0],
  'webhookSendEveryMs' | 'webhookAllowHttpHosts' | 'webhookAllowAddresses' | 'webhookSender'
>;
export const EXAMPLE_RULES = join(import.meta.dirname, '..', 'rules');

export interface Gateway {
  app: FastifyInstance;
  store: Store;
  /** What the database holds, asked through the store's engine (tests only). */
  inspect: Inspector;
  rules: RulesHolder;
  dir: string;
  /** Raw secrets close() searches the log and the database for; add any a test makes itself. */
  secrets: Set<string>;
  /** Issues a fresh v1 key for an integration handle through the admin API. */
  issueKey(handle: string): Promise<string>;
  /** POSTs a lead with the given key. */
  submit(key: string, body: unknown): Promise<LightMyRequestResponse>;
  admin(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

/** The console's cookie secret in tests (test/console/). */
export const CONSOLE_SECRET = 'test-console-secret-0123456789abcdef';

export async function startGateway(
  options: {
    rulesDir?: string;
    rateLimitPerMinute?: number;
    authFailuresPerMinute?: number;
    connections?: ConnectionLimits;
    trustProxy?: string[];
    console?: Partial<ConsoleConfig>;
    outageQuietMs?: number;
    statementTimeoutMs?: number;
    /** The webhook sender's settings: without `webhookSendEveryMs` the gateway sends no webhook. */
    webhooks?: WebhookTestConfig;
  } = {},
): Promise<Gateway> {
  const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-test-'));
  // A small statement timeout (PostgreSQL) makes a held lock a storage failure soon.
  const store = await openTestStore(
    dir,
    undefined,
    options.statementTimeoutMs === undefined ? {} : { statementTimeoutMs: options.statementTimeoutMs },
  );
  const rules = createRulesHolder(options.rulesDir ?? EXAMPLE_RULES);
  // Every test gateway logs to a file that close() searches, with the database, for the secrets it saw.
  const logFile = join(dir, 'gateway.log');
  const logger = createLogger('info', pino.destination({ dest: logFile, sync: true }));
  const secrets = new Set<string>([ADMIN_TOKEN, ...(options.console ? [CONSOLE_SECRET] : [])]);
  const limits = {
    ...(options.rateLimitPerMinute ? { rateLimitPerMinute: options.rateLimitPerMinute } : {}),
    ...(options.authFailuresPerMinute ? { authFailuresPerMinute: options.authFailuresPerMinute } : {}),
    ...(options.connections ? { connections: options.connections } : {}),
    ...(options.trustProxy ? { trustProxy: options.trustProxy } : {}),
    ...(options.console ? { console: { secret: CONSOLE_SECRET, secureCookies: true, ...options.console } } : {}),
  };
  // On PostgreSQL the counters are shared through the database, as main.ts opens them.
  const limiters =
    testEngine() === 'postgres'
      ? await openSharedLimiters(databaseEnv(store).DATABASE_URL!, logger, { replicas: store.replicas })
      : undefined;
  const app = await buildApp(
    { adminToken: ADMIN_TOKEN, ...limits, ...options.webhooks },
    {
      store,
      rules,
      logger,
      ...(limiters ? { limiters } : {}),
      ...(options.outageQuietMs ? { outageQuietMs: options.outageQuietMs } : {}),
    },
  );
  recordForContract(app);
  const admin: Gateway['admin'] = async (method, url, body) => {
    const sent = (body as { key?: unknown } | undefined)?.key;
    if (typeof sent === 'string') secrets.add(sent);
    const res = await app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      ...(body === undefined ? {} : { payload: body as object }),
    });
    const issued = /^application\/json/.test(String(res.headers['content-type']))
      ? (res.json() as { key?: unknown }).key
      : undefined;
    if (typeof issued === 'string') secrets.add(issued);
    return res;
  };
  return {
    app,
    store,
    inspect: inspect(store),
    rules,
    dir,
    secrets,
    admin,
    async issueKey(handle) {
      const res = await admin('POST', `/admin/v1/integrations/${handle}/keys`);
      if (res.statusCode !== 201) throw new Error(`issuing a key failed: ${res.statusCode} ${res.body}`);
      return res.json<{ key: string }>().key;
    },
    submit: (key, body) =>
      app.inject({
        method: 'POST',
        url: '/api/integrations/v1/leads/',
        headers: { authorization: `Bearer ${key}` },
        payload: body as object,
      }),
    async close() {
      const stored = await storeContentFiles(store, dir);
      await app.close();
      const found = secretsFoundIn([logFile, ...stored], secrets);
      rmSync(dir, { recursive: true, force: true });
      if (found.length > 0) throw new Error(`a raw secret was stored or logged: ${found.join('; ')}`);
    },
  };
}

/** Every response of `app` is checked against the OpenAPI document after the run (test/support/contract-setup.ts). */
export function recordForContract(app: FastifyInstance, options: { upstream?: boolean } = {}): void {
  const responsesDir = inject('contractResponsesDir');
  if (responsesDir)
    recordResponses(app, join(responsesDir, `${process.pid}.jsonl`), {
      testFile: relative(process.cwd(), expect.getState().testPath ?? ''),
      ...options,
    });
}
