// The integration quota of the replicas of one PostgreSQL database, counted in each replica's memory
// and settled into the shared rows in batches: one statement per replica per interval, not per request.
import type pg from 'pg';
import { WINDOW_MS, type RateLimiter, type WindowUsage } from './limiter.js';

/** How often a replica settles its counts, unless RATE_LIMIT_SYNC_MS says otherwise (docs/operations/rate-limits.md). */
export const DEFAULT_SYNC_MS = 100;

/**
 * The share of a limit the replicas together may overshoot it by. Between two readings of the shared
 * total a replica accepts at most `unseenBudget` units the others cannot see; with R replicas the
 * others' unseen units are at most (R - 1) × that, so an integration gets at most its limit plus
 * max(10% of it, R - 1) in a window while every replica counts R; a replica that counts fewer (just
 * after another started, or its reading of them failed) takes a larger budget (docs/operations/rate-limits.md).
 */
export const TOLERANCE_SHARE = 0.1;

/** The units a replica may accept beyond the shared total it last read: its part of the tolerance, at least one. */
export const unseenBudget = (limit: number, replicas: number): number =>
  Math.max(Math.floor((limit * TOLERANCE_SHARE) / Math.max(replicas, 1)), 1);

/**
 * How many units past `limit` R replicas may accept together in a window: the others' unseen budgets,
 * (R - 1) × unseenBudget, at most max(10% of the limit, R - 1). Which replica's view is the latest does
 * not matter: every unit a replica accepted is either in the total it last read or in its budget.
 */
export const quotaTolerance = (limit: number, replicas: number): number =>
  (Math.max(replicas, 1) - 1) * unseenBudget(limit, replicas);

/** What the settlement needs of the shared limiter: its pool, its fallback and the table's key prefix. */
export interface SettlementContext {
  pool: pg.Pool;
  /** Row keys are `<prefix>:<integration id>`, as the per-request counter writes them. */
  keyPrefix: string;
  table: string;
  syncMs: number;
  fallback: {
    replicasSeen(): number;
    /** Set while the database did not answer the last try and has not answered since. */
    isDown(): boolean;
    /** Down, and not yet time to try it again. */
    skipShared(): boolean;
    startCall(): boolean;
    succeeded(probe: boolean): void;
    failed(error: unknown): void;
    onRecovered(then: () => void): void;
  };
}

/** One key's count in its window, as this replica knows it. */
interface Count {
  /** The shared total this replica last read for the window (its own settled units included). */
  settled: number;
  /** Units counted here and not in `settled`: in the settlement on its way, and counted since. */
  inFlight: number;
  pending: number;
  /** The window's end: the shared row's once read, else this replica's first unit + WINDOW_MS. */
  resetAt: number;
}

/**
 * All the keys a settlement carries, in one statement: the rows are taken in key order, so two
 * replicas settling the same keys at once wait for each other instead of deadlocking. A row whose
 * window ended starts a new one at the units carried (never below 0, a give-back of the old window),
 * ending when the first of them was counted + WINDOW_MS, as a memory counter's window would. Returns
 * every carried row's total and window end.
 */
const settleSql = (table: string) => `
  INSERT INTO ${table} AS r (key, points, expire)
    SELECT key, units, expire FROM unnest($1::varchar[], $2::integer[], $3::bigint[]) AS u (key, units, expire) ORDER BY key
  ON CONFLICT (key) DO UPDATE SET
    points = CASE WHEN r.expire <= $4 THEN GREATEST(excluded.points, 0) ELSE r.points + excluded.points END,
    expire = CASE WHEN r.expire <= $4 THEN excluded.expire ELSE r.expire END
  RETURNING key, points, expire`;

export interface SettledQuota extends RateLimiter {
  /** Stops the interval and settles what the replica holds (one last statement); resolves either way. */
  close(): Promise<void>;
}

/**
 * A hit is decided in memory from the shared total last read plus the units this replica counted
 * since (its best estimate). Every `syncMs` the counts of all keys go to the database in one upsert,
 * whose answer is the new total read. A replica that has used its unseen budget for a key settles at
 * once, and the requests waiting on it decide on the fresh total: a burst on one replica costs a
 * statement per budget, never more than the limit plus the tolerance across replicas. A refusal too
 * is decided on a total read for it (quota.ts then refuses the key here until its window ends,
 * without a statement), so a stale estimate never shuts a replica out of a window. While the
 * database does not answer (a settlement failed), units are counted alone on top of the total last
 * read, the quota allows the replica's share of what the limit left (quota.ts), and they stay pending:
 * the next settlement that succeeds carries them to the shared rows.
 */
export function createSettledQuota(context: SettlementContext): SettledQuota {
  const { pool, keyPrefix, fallback } = context;
  const counts = new Map<string, Count>();
  /** Keys whose total the next settlement reads even if they carry no units (a refusal to decide). */
  const reads = new Set<string>();
  const text = settleSql(context.table);

  /** The key's count in its current window: a window that ended leaves nothing behind. */
  function current(key: string): Count {
    const now = Date.now();
    let count = counts.get(key);
    if (!count || count.resetAt <= now) {
      count = { settled: 0, inFlight: 0, pending: 0, resetAt: now + WINDOW_MS };
      counts.set(key, count);
    }
    return count;
  }
  const unseen = (count: Count) => count.inFlight + count.pending;
  const usage = (count: Count): WindowUsage =>
    fallback.isDown()
      ? // Counted alone: the window's total as last read stays counted, and the units the shared count
        // has not taken are added to it; the replica's share is of what the limit left (quota.ts).
        {
          used: count.settled + unseen(count),
          settled: count.settled,
          resetAt: count.resetAt,
          localOnly: true,
          replicas: fallback.replicasSeen(),
        }
      : { used: count.settled + unseen(count), resetAt: count.resetAt };

  async function settle(): Promise<void> {
    const now = Date.now();
    for (const [key, count] of counts) if (count.resetAt <= now) counts.delete(key);
    const batch = [...counts]
      .filter(([key, count]) => count.pending !== 0 || reads.has(key))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    reads.clear();
    if (batch.length === 0) return;
    for (const [, count] of batch) {
      count.inFlight = count.pending;
      count.pending = 0;
    }
    const probe = fallback.startCall();
    try {
      const { rows } = await pool.query<{ key: string; points: number; expire: string }>({
        name: `${keyPrefix}-settle`,
        text,
        values: [
          batch.map(([key]) => `${keyPrefix}:${key}`),
          batch.map(([, c]) => c.inFlight),
          batch.map(([, c]) => c.resetAt),
          now,
        ],
      });
      const totals = new Map(rows.map((row) => [row.key, row]));
      for (const [key, count] of batch) {
        const row = totals.get(`${keyPrefix}:${key}`);
        count.inFlight = 0;
        if (!row || counts.get(key) !== count) continue;
        count.settled = Number(row.points);
        count.resetAt = Number(row.expire);
      }
      fallback.succeeded(probe);
    } catch (error) {
      // Carried back: the units wait for the next settlement the database answers.
      for (const [, count] of batch) {
        count.pending += count.inFlight;
        count.inFlight = 0;
      }
      fallback.failed(error);
    }
  }

  // One settlement at a time; callers that come while one runs share the next one.
  let running: Promise<void> | null = null;
  let next: Promise<void> | null = null;
  function settleSoon(read?: string): Promise<void> {
    if (read !== undefined) reads.add(read);
    if (!running) {
      running = settle().finally(() => (running = null));
      return running;
    }
    next ??= running.then(() => {
      next = null;
      return settleSoon();
    });
    return next;
  }

  const tick = () => {
    // While the database is down, a settlement is its probe: one every retry period.
    if (!running && !fallback.skipShared()) void settleSoon();
  };
  const timer = setInterval(tick, context.syncMs);
  timer.unref();
  fallback.onRecovered(() => void settleSoon());

  async function peek(key: string): Promise<WindowUsage> {
    const count = counts.get(key);
    return count && count.resetAt > Date.now() ? usage(count) : { used: 0, resetAt: Date.now() };
  }

  return {
    async hit(key, limit = Number.POSITIVE_INFINITY) {
      for (let read = false; ; read = true) {
        const count = current(key);
        const within = count.settled + unseen(count) + 1 <= limit;
        const decided = within ? unseen(count) + 1 <= unseenBudget(limit, fallback.replicasSeen()) : read;
        if (fallback.isDown() || decided) {
          count.pending++;
          return usage(count);
        }
        // The unseen budget is spent, or the estimate says over the limit (which quota.ts then
        // remembers until the window ends): decide on the total the database answers now. A total
        // read earlier may hold units that other replicas have given back since.
        await settleSoon(key);
      }
    },
    async giveBack(key, hit) {
      // After the window ended, a give-back would reach a window that no longer exists.
      const count = counts.get(key);
      if (!count || Date.now() >= hit.resetAt || count.resetAt <= Date.now()) return peek(key);
      count.pending--;
      return usage(count);
    },
    peek,
    async close() {
      clearInterval(timer);
      // A settlement asked for while one ran starts when that one ends: both are waited for.
      while (running || next) await (next ?? running);
      await settle();
    },
  };
}
