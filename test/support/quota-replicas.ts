// Gateways on one fresh PostgreSQL database, each with its store (its row in `replicas`) and its
// shared rate-limit counters, as main.ts opens them: the replicas of a deployment in one process.
// The quota's tests drive new leads through them and read the shared rows.
import pg from 'pg';
import { expect } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { freshDatabase } from './postgres.js';
import {
  SHARED_LIMITS_TABLE,
  openSharedLimiters,
  type LimiterLog,
  type SharedLimitersOptions,
} from '../../src/rate-limit/shared-limiter.js';
import { buildApp } from '../../src/app.js';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.js';
import { createRulesHolder } from '../../src/rules/loader.js';
import { EXAMPLE_RULES } from '../helper.js';

const ADMIN = 'quota-replicas-admin-token-0123456789abcdef';
const LEADS = '/api/integrations/v1/leads/';

export interface Replica {
  app: FastifyInstance;
  /** The counters' warn lines (unreachable, reachable again). */
  warnings: string[];
}

/**
 * `count` gateways on a fresh database with the quota `limit`; the caller closes their apps (which
 * closes the counters). Every store is opened first, so each limiter sees all the live replicas.
 */
export async function quotaReplicas(
  clusterUrl: string,
  limit: number,
  options: Pick<SharedLimitersOptions, 'retryMs' | 'syncMs'> = {},
  count = 2,
): Promise<{ url: string; replicas: Replica[] }> {
  const url = await freshDatabase(clusterUrl);
  const stores = [];
  for (let i = 0; i < count; i++) stores.push(await openPostgresStore({ url, poolSize: 4 }));
  const replicas: Replica[] = [];
  for (const store of stores) {
    const warnings: string[] = [];
    const log: LimiterLog = { warn: (_fields, message) => void warnings.push(message) };
    const limiters = await openSharedLimiters(url, log, { replicas: store.replicas, ...options });
    const app = await buildApp(
      { adminToken: ADMIN, rateLimitPerMinute: limit },
      { store, rules: createRulesHolder(EXAMPLE_RULES), limiters },
    );
    replicas.push({ app, warnings });
  }
  return { url, replicas };
}

export async function issueKey(app: FastifyInstance): Promise<string> {
  const res = await app.inject({
    method: 'POST',
    url: '/admin/v1/integrations/brightpath:website-form/keys',
    headers: { authorization: `Bearer ${ADMIN}` },
  });
  expect(res.statusCode).toBe(201);
  return res.json<{ key: string }>().key;
}

export interface Answer {
  status: number;
  headers: Record<string, unknown>;
}

/** Lead `i` of `count` (event `<tag>-<i>`) goes to replica `i % replicas`, `inFlight` at a time. */
export async function alternate(
  replicas: Replica[],
  key: string,
  tag: string,
  count: number,
  inFlight: number,
): Promise<Answer[]> {
  const answers: Answer[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      for (let i = next++; i < count; i = next++) {
        const res = await replicas[i % replicas.length]!.app.inject({
          method: 'POST',
          url: LEADS,
          headers: { authorization: `Bearer ${key}` },
          payload: { event_id: `${tag}-${i}`, first_name: 'Quota' },
        });
        answers[i] = { status: res.statusCode, headers: res.headers };
      }
    }),
  );
  return answers;
}

export const count = (answers: Answer[], status: number) => answers.filter((a) => a.status === status).length;

/** Runs `work` while the shared counters' table is locked: every statement on it waits for the limiter's timeout, then falls back. */
export async function whileCountersLocked<T>(url: string, work: () => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('BEGIN');
    await client.query(`LOCK TABLE ${SHARED_LIMITS_TABLE} IN ACCESS EXCLUSIVE MODE`);
    return await work();
  } finally {
    await client.query('ROLLBACK').catch(() => {});
    await client.end();
  }
}

/**
 * Runs `work` while the failed-authentication rows (made by an earlier failure) are locked, as a burst of
 * bad keys holds them: every count of a failure waits for the limiter's timeout, then falls back.
 */
export async function whileAuthFailuresLocked<T>(url: string, work: () => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('BEGIN');
    const { rowCount } = await client.query(
      `SELECT key FROM ${SHARED_LIMITS_TABLE} WHERE key LIKE 'auth-failures:%' FOR UPDATE`,
    );
    expect(rowCount).toBeGreaterThan(0);
    return await work();
  } finally {
    await client.query('ROLLBACK').catch(() => {});
    await client.end();
  }
}

/** The quota rows' counts (the shared totals), whatever their window. */
export async function sharedQuotaCounts(url: string): Promise<number[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ points: number }>(
      `SELECT points FROM ${SHARED_LIMITS_TABLE} WHERE key LIKE 'quota:%' ORDER BY key`,
    );
    return rows.map((r) => Number(r.points));
  } finally {
    await client.end();
  }
}
