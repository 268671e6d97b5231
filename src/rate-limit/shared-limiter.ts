// The RateLimiter shared by the replicas of one PostgreSQL database (rate-limiter-flexible's
// RateLimiterPostgres), counting in this process alone while the database does not answer.
import pg from 'pg';
import { RateLimiterMemory, RateLimiterPostgres, type RateLimiterRes } from 'rate-limiter-flexible';
import { WINDOW_MS, type RateLimiter, type RateLimiters, type WindowUsage } from './limiter.js';
import { createMemoryLimiter, usageOf } from './memory-limiter.js';
import type { ReplicaSet } from '../store/replicas.js';
import { DEFAULT_SYNC_MS, createSettledQuota } from './settled-quota.js';
import { AUTH_FAILURES_LINES, QUOTA_LINES, createFallback, type Fallback, type LimiterLog } from './shared-fallback.js';

/** The library's table (key, points, expire), made by PostgreSQL migration 4; one row per counted key and window. */
export const SHARED_LIMITS_TABLE = 'rate_limits';
/**
 * Connections of the limiter's own pool. Not the store's: a unit of work holds its connection for a
 * whole transaction and its commit, so under load a one-statement count would queue behind them
 * (and time out into the fallback). Four connections carry several thousand counts a second here
 * (docs/reliability.md#shared-rate-limits); the rows of one integration serialize on its row anyway.
 */
export const SHARED_LIMITS_POOL_SIZE = 4;
/** Longest a count may wait for a connection, and run on the server, before this process counts alone. */
export const SHARED_LIMITS_TIMEOUT_MS = 500;
/**
 * Counts of failed authentications sent to the database at once, at most, from one process: a flood of
 * bad keys (a statement each, possibly waiting on a locked row) never holds more than this many of the
 * pool's connections, so the quota's statements always find one. The others wait their turn, in order,
 * and are counted exactly; should the database not answer, the fallback then counts them alone at once.
 */
export const AUTH_FAILURES_IN_FLIGHT = 1;
/** While the database does not answer, one request tries it again this often; the others count locally. */
export const SHARED_LIMITS_RETRY_MS = 5_000;

/**
 * How often a replica looks up the live replicas on the database while it can (the store's replica
 * set): the count it last saw sets its share of a limit when it has to count alone.
 */
export const REPLICAS_LOOK_MS = 5_000;

export type { LimiterLog } from './shared-fallback.js';

/** Runs `shared`, or `local` when the database is skipped or fails; says which one counted, and among how many replicas. */
async function either(
  fallback: Fallback,
  shared: () => Promise<RateLimiterRes | null>,
  local: () => Promise<RateLimiterRes | null>,
): Promise<WindowUsage> {
  const alone = async (): Promise<WindowUsage> => ({
    ...usageOf(await local()),
    localOnly: true,
    replicas: fallback.replicasSeen(),
  });
  if (fallback.skipShared()) return alone();
  const probe = fallback.startCall();
  try {
    const usage = usageOf(await shared());
    fallback.succeeded(probe);
    return usage;
  } catch (error) {
    fallback.failed(error);
    return alone();
  }
}

/**
 * The quota counted per request (RATE_LIMIT_SYNC_MS=0) asks the database for every count. The failed-authentication
 * check runs before every key lookup, so asking the database there would add a statement to every
 * request: it answers instead the count this process last got back for the address from its own
 * failures (`last-seen`). An address that reaches the limit through other replicas is refused here
 * after its next failure on this one: with R replicas at most R - 1 failures past the limit.
 */
type PeekFrom = 'shared' | 'last-seen';

/** Addresses whose last-seen count a process keeps at most; past it, ended windows and then the oldest go. */
export const LAST_SEEN_MAX = 10_000;

function lastSeenCounts() {
  const seen = new Map<string, WindowUsage>();
  const none = (): WindowUsage => ({ used: 0, resetAt: Date.now() });
  return {
    note(key: string, usage: WindowUsage): WindowUsage {
      const before = seen.get(key);
      // Answers of concurrent hits arrive in any order: while a window lasts its count only grows.
      if (before && before.resetAt > Date.now() && before.used > usage.used) return usage;
      if (seen.size >= LAST_SEEN_MAX && !seen.has(key)) {
        for (const [k, u] of seen) if (u.resetAt <= Date.now()) seen.delete(k);
        if (seen.size >= LAST_SEEN_MAX) seen.delete(seen.keys().next().value!);
      }
      seen.set(key, usage);
      return usage;
    },
    get(key: string): WindowUsage {
      const usage = seen.get(key);
      return usage && usage.resetAt > Date.now() ? usage : none();
    },
  };
}

/**
 * The units a replica counted alone, per key, not yet in the shared count: added to it when the
 * database answers again, so the window's total across replicas stays right. Units of a window that
 * ended meanwhile are dropped (their window no longer exists). Kept for the quota only, whose keys
 * are the integrations (a bounded set); failed authentications counted alone are not carried.
 */
function unitsCountedAlone() {
  const pending = new Map<string, { units: number; resetAt: number }>();
  return {
    add(key: string, resetAt: number, units: 1 | -1): void {
      const before = pending.get(key);
      const running = before && before.resetAt > Date.now() ? before.units : 0;
      pending.set(key, { units: running + units, resetAt });
    },
    /** The key's units counted alone in its window and not carried yet. */
    units(key: string): number {
      const p = pending.get(key);
      return p && p.resetAt > Date.now() ? p.units : 0;
    },
    /** Whether any units wait to be carried. */
    waiting(): boolean {
      return pending.size > 0;
    },
    /** Takes the units to carry, leaving none behind; those whose carrying fails are put back with `restore`. */
    take(): { key: string; units: number; resetAt: number }[] {
      const now = Date.now();
      const carry = [...pending].filter(([, p]) => p.resetAt > now && p.units > 0).map(([key, p]) => ({ key, ...p }));
      pending.clear();
      return carry;
    },
    restore(key: string, units: number, resetAt: number): void {
      pending.set(key, { units: (pending.get(key)?.units ?? 0) + units, resetAt });
    },
  };
}

function sharedLimiter(
  shared: RateLimiterPostgres,
  local: RateLimiterMemory,
  fallback: Fallback,
  peekFrom: PeekFrom,
  carryAlone: boolean,
  inFlightMax = Infinity,
): RateLimiter {
  const seen = lastSeenCounts();
  // Hits sent to the database at once, at most `inFlightMax`; the others wait in order for a turn.
  let inFlight = 0;
  const turns: (() => void)[] = [];
  const takeTurn = (): Promise<void> | void => {
    if (inFlight < inFlightMax) {
      inFlight++;
      return;
    }
    return new Promise<void>((resolve) => turns.push(resolve));
  };
  // A finished hit hands its turn to the next one waiting, or gives it back.
  const endTurn = () => {
    const next = turns.shift();
    if (next) next();
    else inFlight--;
  };
  const hitShared = async (key: string): Promise<WindowUsage> => {
    if (inFlightMax === Infinity || fallback.skipShared())
      return either(
        fallback,
        () => shared.penalty(key, 1),
        () => local.penalty(key, 1),
      );
    await takeTurn();
    try {
      return await either(
        fallback,
        () => shared.penalty(key, 1),
        () => local.penalty(key, 1),
      );
    } finally {
      endTurn();
    }
  };
  /** The shared count this process last got back for each key: a count made alone starts from it. */
  const settled = lastSeenCounts();
  const alone = unitsCountedAlone();
  /** A count made alone lasts as long as the shared window it adds to, when one is known. */
  const windowEnd = (key: string, counted: WindowUsage) => {
    const base = settled.get(key);
    return base.used > 0 ? base.resetAt : counted.resetAt;
  };
  /**
   * What the database answered, or a count made alone on top of the shared count last got back for
   * the key in its window (those units stay counted): for the quota the units counted alone and not
   * yet carried to the shared count, for failed authentications (never carried) the local counter's.
   */
  const fromShared = (key: string, counted: WindowUsage): WindowUsage => {
    if (!counted.localOnly) return settled.note(key, counted);
    const base = settled.get(key);
    const own = carryAlone ? alone.units(key) : counted.used;
    return { ...counted, used: base.used + own, settled: base.used, resetAt: windowEnd(key, counted) };
  };
  const ask = async (key: string) =>
    fromShared(
      key,
      await either(
        fallback,
        () => shared.get(key),
        () => local.get(key),
      ),
    );
  const peek = async (key: string) => (peekFrom === 'shared' ? ask(key) : seen.get(key));
  const carry = () => {
    for (const { key, units, resetAt } of alone.take()) {
      // One statement per key counted alone; a failure keeps the units for the next carry. Its answer,
      // the total with them, is where a later fallback starts.
      shared.penalty(key, units).then(
        (res) => void settled.note(key, usageOf(res)),
        (error: unknown) => {
          alone.restore(key, units, resetAt);
          fallback.failed(error);
        },
      );
    }
  };
  if (carryAlone) fallback.onRecovered(carry);
  return {
    async hit(key) {
      const counted = await hitShared(key);
      if (carryAlone && counted.localOnly) alone.add(key, windowEnd(key, counted), 1);
      // A request counted alone that ended after the recovery's carry left its unit behind: the next
      // count the database answers carries it.
      else if (carryAlone && alone.waiting()) carry();
      const usage = fromShared(key, counted);
      return peekFrom === 'last-seen' ? seen.note(key, usage) : usage;
    },
    async giveBack(key, hit) {
      // After the window ended, a reward would open a new window at -1: one request more than allowed.
      if (Date.now() >= hit.resetAt) return peek(key);
      if (hit.localOnly) {
        const counted: WindowUsage = {
          ...usageOf(await local.reward(key, 1)),
          localOnly: true,
          replicas: fallback.replicasSeen(),
        };
        if (carryAlone) alone.add(key, windowEnd(key, counted), -1);
        return fromShared(key, counted);
      }
      // The unit is in the shared count: it goes back there, or stays counted if the database does not answer.
      if (fallback.skipShared()) return hit;
      try {
        return usageOf(await shared.reward(key, 1));
      } catch (error) {
        fallback.failed(error);
        return hit;
      }
    },
    peek,
  };
}

/** Creates the library's limiter on `pool`; resolves once its table exists (created if missing). */
function postgresCounter(pool: pg.Pool, keyPrefix: string, tableCreated: boolean): Promise<RateLimiterPostgres> {
  let ready: (error?: Error) => void = () => {};
  const created = new Promise<void>((resolve, reject) => (ready = (error) => (error ? reject(error) : resolve())));
  const limiter = new RateLimiterPostgres(
    {
      storeClient: pool,
      tableName: SHARED_LIMITS_TABLE,
      keyPrefix,
      points: Number.MAX_SAFE_INTEGER,
      duration: WINDOW_MS / 1000,
      tableCreated,
    },
    (error?: Error) => ready(error),
  );
  return created.then(() => limiter);
}

export interface SharedLimitersOptions {
  /** The store's replica set: how many replicas are live (one, this process, when not given). */
  replicas?: Pick<ReplicaSet, 'live'>;
  /** SHARED_LIMITS_RETRY_MS unless given (tests). */
  retryMs?: number;
  /**
   * How often the quota's counts are settled (RATE_LIMIT_SYNC_MS; DEFAULT_SYNC_MS unless given);
   * 0 counts every request in the database, one statement each.
   */
  syncMs?: number;
}

/**
 * The live replicas as this process last saw them: looked up at open and every REPLICAS_LOOK_MS on
 * the store's pool; a look that fails keeps the last count (at least 1, this process).
 */
async function watchReplicas(
  replicas: SharedLimitersOptions['replicas'],
): Promise<{ seen: () => number; stop: () => void }> {
  let seen = 1;
  if (!replicas) return { seen: () => seen, stop: () => {} };
  const look = () =>
    replicas.live().then(
      (live) => void (seen = Math.max(live.length, 1)),
      () => {},
    );
  await look();
  const timer = setInterval(() => void look(), REPLICAS_LOOK_MS);
  timer.unref();
  return { seen: () => seen, stop: () => clearInterval(timer) };
}

/**
 * The gateway's counters on the PostgreSQL database at `url`, on a pool of their own with short
 * timeouts (free outcomes stay in memory: quota.ts). The quota is counted in memory and settled
 * every `syncMs` (settled-quota.ts: at most max(10% of the limit, replicas - 1) past it); with
 * `syncMs` 0, and for failed authentications, each unit is one atomic upsert of the key's row
 * (INSERT … ON CONFLICT … RETURNING), exact across replicas. While the database does not answer a
 * counter, each replica counts alone on top of the total it last read and tells the quota how many
 * replicas it last saw (its share); the quota's units counted alone go to the shared rows when the
 * database answers again. Each counter has its own fallback (shared-fallback.ts).
 */
export async function openSharedLimiters(
  url: string,
  log: LimiterLog,
  options: SharedLimitersOptions = {},
): Promise<RateLimiters> {
  const pool = new pg.Pool({
    connectionString: url,
    max: SHARED_LIMITS_POOL_SIZE,
    connectionTimeoutMillis: SHARED_LIMITS_TIMEOUT_MS,
    statement_timeout: SHARED_LIMITS_TIMEOUT_MS,
    // The row of a busy integration is locked by each count in turn: a long wait is a failing database.
    lock_timeout: SHARED_LIMITS_TIMEOUT_MS,
    // The client-side bound: a statement whose answer never comes (a silent network).
    query_timeout: SHARED_LIMITS_TIMEOUT_MS * 2,
    application_name: 'lead-gateway rate limits',
    // A count is no lead: it need not wait for its WAL flush. A crash of the database server loses the
    // last fraction of a second of counts (wal_writer_delay), never a unit of work of the store.
    options: '-c synchronous_commit=off',
  });
  // A lost connection is replaced by the pool; a count that fails is what the fallback reports.
  pool.on('error', () => {});
  pool.on('connect', (client) => void client.on('error', () => {}));
  try {
    // The store's migrations made the table (migration 4): the library never creates it.
    const quota = await postgresCounter(pool, 'quota', true);
    const authFailures = await postgresCounter(pool, 'auth-failures', true);
    const replicas = await watchReplicas(options.replicas);
    const retryMs = options.retryMs ?? SHARED_LIMITS_RETRY_MS;
    // One fallback per counter: failed authentications that cannot be counted never change how quotas are.
    const fallback = createFallback(log, {
      table: SHARED_LIMITS_TABLE,
      retryMs,
      replicasSeen: replicas.seen,
      lines: QUOTA_LINES,
    });
    const authFallback = createFallback(log, {
      table: SHARED_LIMITS_TABLE,
      retryMs,
      replicasSeen: replicas.seen,
      lines: AUTH_FAILURES_LINES,
    });
    const local = (keyPrefix: string) =>
      new RateLimiterMemory({ keyPrefix, points: Number.MAX_SAFE_INTEGER, duration: WINDOW_MS / 1000 });
    const syncMs = options.syncMs ?? DEFAULT_SYNC_MS;
    const settled =
      syncMs > 0
        ? createSettledQuota({ pool, keyPrefix: 'quota', table: SHARED_LIMITS_TABLE, syncMs, fallback })
        : null;
    return {
      quota: settled ?? sharedLimiter(quota, local('quota'), fallback, 'shared', true),
      freeOutcomes: createMemoryLimiter('free-outcomes'),
      authFailures: sharedLimiter(
        authFailures,
        local('auth-failures'),
        authFallback,
        'last-seen',
        false,
        AUTH_FAILURES_IN_FLIGHT,
      ),
      close: async () => {
        replicas.stop();
        // The counts not yet settled go to the shared rows before the pool closes.
        await settled?.close();
        await pool.end();
      },
    };
  } catch (error) {
    await pool.end().catch(() => {});
    throw error;
  }
}
