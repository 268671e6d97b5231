// The change feed of the PostgreSQL engine: how a gateway process learns, before its next request,
// that another process (a replica, the CLI) changed a key or a migration state.
//
// A trigger bumps change_feed.version and notifies it at COMMIT (change-feed-schema.ts). Each process
// LISTENs on a connection of its own; a notification moves its generation, which makes the remembered
// reads go (src/store/hot-reads.ts), and only then is the version recorded as seen in `replicas`. The
// process that made a change waits, after its COMMIT, until every live process has seen it
// (`awaitSeen`), so the change applies to the very next request on any replica.
//
// Everything the feed says to the database (registering, the heartbeat, the versions seen) goes over
// its own connection, in order, with timeouts: never behind the store's busy pool, and a feed
// connection that dies stops the heartbeat with it. A process remembers nothing (every `generation()`
// is a new one) unless its feed is connected, it is registered, and its last heartbeat is recent:
// exactly while the others wait for it. A database that cannot take the feed (a standby in recovery
// refuses LISTEN; a read-only one the registration) only makes the process remember nothing.
//
// The same connection carries what a process says about its rules (the version it runs, its last
// failed reload, the newest reload request it answered: `record`), and hears requests to reload on a
// second channel (replica-rules-schema.ts), which it hands to the handler set by `onReloadAsked`.
import { hostname } from 'node:os';
import pg from 'pg';
import { CHANGE_FEED_CHANNEL } from './change-feed-schema.js';
import { RULES_RELOAD_CHANNEL } from './replica-rules-schema.js';
import { newReplicaId, processStartedAt, type RulesRecord } from '../replicas.js';

/** How often a process says it is alive; a process silent for LIVE_WITHIN_MS is not waited for. */
export const HEARTBEAT_MS = 2_000;
export const LIVE_WITHIN_MS = 10_000;
/**
 * How long a change waits for every live process to have seen it before answering anyway. Longer
 * than a remembered read lives (hot-reads.ts, 1 s): by then a process that never confirmed has
 * forgotten every read made before the change anyway.
 */
export const SEEN_TIMEOUT_MS = 2_000;
/** A process whose last heartbeat is older than this stops remembering: the others may stop waiting for it soon. */
const STALE_AFTER_MS = LIVE_WITHIN_MS - 2 * HEARTBEAT_MS;
const SEEN_POLL_MS = 10;
const RECONNECT_MS = 1_000;
/** Each statement of the feed's connection, on the server and waited for here. */
const FEED_STATEMENT_TIMEOUT_MS = 2_000;
/** Rows of processes silent this long are removed when a process starts. */
const FORGET_AFTER = '1 hour';

export interface FeedLog {
  warn(details: Record<string, unknown>, message: string): void;
  info(details: Record<string, unknown>, message: string): void;
}

export interface ChangeFeed {
  readonly replicaId: string;
  /** Moves whenever a change made elsewhere may have been missed; remembered reads of an older generation go. */
  generation(): number;
  /**
   * Resolves once every live process has applied the newest change (or after SEEN_TIMEOUT_MS);
   * answers the ids of processes that had not seen it by then.
   */
  awaitSeen(): Promise<string[]>;
  /** Records this process's rules (and the reload request answered) on the feed's connection; again at every registration. */
  record(rules: RulesRecord, answered?: number): Promise<void>;
  /** Told of each reload request made by another process, and of one missed while disconnected. */
  onReloadAsked(handler: ((request: number) => void) | null): void;
  close(): Promise<void>;
}

export interface FeedOptions {
  url: string;
  connectTimeoutMs: number;
  /** The store's pool: only the waits of `awaitSeen` run on it. */
  pool: pg.Pool;
  log?: FeedLog;
}

/** Warns once when a condition starts and says once when it ends, never once per attempt. */
function episode(log: FeedLog | undefined, start: string, end: string) {
  let on = false;
  return {
    failed(details: Record<string, unknown>) {
      if (!on) log?.warn(details, start);
      on = true;
    },
    recovered(details: Record<string, unknown>) {
      if (on) log?.info(details, end);
      on = false;
    },
  };
}

export async function startChangeFeed(options: FeedOptions): Promise<ChangeFeed> {
  const replicaId = newReplicaId();
  const startedAt = processStartedAt();
  const log = options.log;
  let generation = 0;
  let client: pg.Client | null = null;
  let registered = false;
  let beatAt = 0;
  let closed = false;
  let reconnect: NodeJS.Timeout | null = null;
  let rules: RulesRecord | null = null;
  /** The newest reload request answered; null until the first registration (which answers every earlier one: the rules were just read). */
  let answered: number | null = null;
  let reloadAsked: ((request: number) => void) | null = null;
  /** The feed's statements, one after another on its connection. */
  let queue: Promise<unknown> = Promise.resolve();
  const connection = episode(
    log,
    'change feed lost its connection: keys and states are read from the database on every request until it is back',
    'change feed reconnected; remembered reads start afresh',
  );
  const registration = episode(
    log,
    'change feed: this process cannot record itself; it remembers no key or state until it can',
    'change feed: this process is recorded again',
  );

  /** Runs a statement on the feed's connection after the ones before it; null when there is none. */
  const onFeed = <R extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<pg.QueryResult<R> | null> => {
    const on = client;
    const next = queue.then(() =>
      on && client === on
        ? on.query<R>({ text, values, query_timeout: FEED_STATEMENT_TIMEOUT_MS } as pg.QueryConfig)
        : null,
    );
    queue = next.catch(() => {});
    return next;
  };

  /**
   * Joins the processes a change waits for. Listening already, so a change committed after this
   * statement's snapshot is notified too; the version never goes back (a notification recorded
   * first wins). The generation moves first: nothing read before counts.
   */
  const register = async (): Promise<void> => {
    generation++;
    try {
      const result = await onFeed<{ request: string }>(
        `INSERT INTO replicas (id, seen_version, heartbeat_at, host, pid, started_at, rules_version, rules_loaded_at, rules_reload_error, reload_answered)
         SELECT $1, f.version, now(), $2, $3, $4, $5, $6, $7, coalesce($8, r.request) FROM change_feed f, rules_reloads r WHERE f.id = 1 AND r.id = 1
         ON CONFLICT (id) DO UPDATE SET seen_version = greatest(replicas.seen_version, excluded.seen_version), heartbeat_at = now(),
           rules_version = excluded.rules_version, rules_loaded_at = excluded.rules_loaded_at, rules_reload_error = excluded.rules_reload_error,
           reload_answered = greatest(replicas.reload_answered, excluded.reload_answered)
         RETURNING (SELECT request FROM rules_reloads WHERE id = 1) AS request`,
        [replicaId, ...rulesColumns(), answered],
      );
      if (result === null) return;
      registered = true;
      unwritten = false;
      beatAt = Date.now();
      registration.recovered({ replica: replicaId });
      const newest = Number(result.rows[0]!.request);
      // A request made while this process was not listening: answered now.
      if (answered !== null && newest > answered) reloadAsked?.(newest);
      answered ??= newest;
    } catch (error) {
      registered = false;
      registration.failed({ err: error, replica: replicaId });
    }
  };

  /** host, pid, started_at, rules_version, rules_loaded_at, rules_reload_error: what a registration writes after the id. */
  const rulesColumns = () => [
    hostname(),
    process.pid,
    startedAt,
    rules?.version ?? null,
    rules?.loadedAt ?? null,
    rules?.reloadError ? JSON.stringify(rules.reloadError) : null,
  ];

  /**
   * Writes this process's rules record. One that fails on a live connection (a statement timeout) is
   * written again at the next heartbeat: meanwhile the others see the previous record.
   */
  let unwritten = false;
  const writeRecord = async (): Promise<void> => {
    if (rules === null) return;
    try {
      await onFeed(
        `UPDATE replicas SET rules_version = $2, rules_loaded_at = $3, rules_reload_error = $4, reload_answered = greatest(reload_answered, $5), heartbeat_at = now()
         WHERE id = $1`,
        [
          replicaId,
          rules.version,
          rules.loadedAt,
          rules.reloadError ? JSON.stringify(rules.reloadError) : null,
          answered ?? 0,
        ],
      );
      unwritten = false;
    } catch (error) {
      unwritten = true;
      registration.failed({ err: error, replica: replicaId });
    }
  };

  const beat = async (): Promise<void> => {
    if (!registered) return register();
    try {
      const result = await onFeed('UPDATE replicas SET heartbeat_at = now() WHERE id = $1', [replicaId]);
      if (result === null) return;
      // The row is gone (removed as silent by another process's start): join again.
      if (result.rowCount === 0) return register();
      beatAt = Date.now();
      if (unwritten) await writeRecord();
    } catch (error) {
      registration.failed({ err: error, replica: replicaId });
    }
  };

  const connect = async (): Promise<void> => {
    const next = new pg.Client({
      connectionString: options.url,
      connectionTimeoutMillis: options.connectTimeoutMs,
      statement_timeout: FEED_STATEMENT_TIMEOUT_MS,
      keepAlive: true,
      application_name: 'lead-gateway change feed',
    });
    next.on('error', (error) => lost(next, error));
    next.on('end', () => lost(next, null));
    next.on('notification', (message) => {
      if (client !== next) return;
      if (message.channel === RULES_RELOAD_CHANNEL) {
        // "<request>:<asking process>": the asking process reloaded itself already.
        const [request, by] = (message.payload ?? '').split(/:(.*)/s);
        if (by !== replicaId) reloadAsked?.(Number(request));
        return;
      }
      if (message.channel !== CHANGE_FEED_CHANNEL) return;
      generation++;
      const version = message.payload ?? '0';
      onFeed(
        'UPDATE replicas SET seen_version = greatest(seen_version, $2::bigint), heartbeat_at = now() WHERE id = $1',
        [replicaId, version],
      ).then(
        () => (beatAt = Date.now()),
        (error: Error) => registration.failed({ err: error, replica: replicaId }),
      );
    });
    try {
      await next.connect();
      // A standby in recovery refuses LISTEN: the connection is ended and tried again later.
      await next.query({
        text: `LISTEN ${CHANGE_FEED_CHANNEL}; LISTEN ${RULES_RELOAD_CHANNEL}`,
        query_timeout: FEED_STATEMENT_TIMEOUT_MS,
      } as pg.QueryConfig);
      if (closed) throw new Error('closed');
    } catch (error) {
      next.removeAllListeners('end');
      await next.end().catch(() => {});
      throw error;
    }
    client = next;
    registered = false;
    await register();
  };

  const scheduleReconnect = () => {
    if (closed || reconnect) return;
    reconnect = setTimeout(() => {
      reconnect = null;
      connect().then(
        () => connection.recovered({ replica: replicaId }),
        (error: Error) => {
          connection.failed({ err: error, replica: replicaId });
          scheduleReconnect();
        },
      );
    }, RECONNECT_MS);
    reconnect.unref();
  };

  function lost(which: pg.Client, error: Error | null): void {
    if (client !== which) return;
    client = null;
    registered = false;
    generation++;
    which.end().catch(() => {});
    if (!closed) {
      connection.failed({ err: error ?? undefined, replica: replicaId });
      scheduleReconnect();
    }
  }

  await options.pool
    .query(`DELETE FROM replicas WHERE heartbeat_at < now() - interval '${FORGET_AFTER}'`)
    .catch(() => {});
  // A feed that cannot start only makes this process remember nothing; the store opens all the same.
  await connect().catch((error: Error) => {
    connection.failed({ err: error, replica: replicaId });
    scheduleReconnect();
  });
  const heartbeat = setInterval(() => {
    if (client) void beat();
  }, HEARTBEAT_MS);
  heartbeat.unref();

  /** Waits until no live process is behind the newest change; the processes still behind at the deadline. */
  const waitForAll = async (deadline: number): Promise<string[]> => {
    for (;;) {
      const { rows } = await options.pool.query<{ id: string }>({
        name: 'feed.behind',
        text: `SELECT id FROM replicas WHERE heartbeat_at > now() - make_interval(secs => $1::double precision / 1000)
               AND seen_version < (SELECT version FROM change_feed WHERE id = 1) ORDER BY id`,
        values: [LIVE_WITHIN_MS],
      });
      if (rows.length === 0 || Date.now() >= deadline) return rows.map((r) => r.id);
      await new Promise((resolve) => setTimeout(resolve, SEEN_POLL_MS));
    }
  };

  return {
    replicaId,
    generation: () => (client && registered && Date.now() - beatAt < STALE_AFTER_MS ? generation : ++generation),
    async awaitSeen() {
      const deadline = Date.now() + SEEN_TIMEOUT_MS;
      let behind: string[];
      try {
        behind = await waitForAll(deadline);
      } catch (error) {
        // Who has seen it cannot be asked: wait out the bound, after which no process still holds a
        // read made before the change.
        log?.warn(
          { err: error },
          'change feed: cannot ask which processes have seen a change; waiting out the bound instead',
        );
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, deadline - Date.now())));
        return ['(unknown)'];
      }
      if (behind.length > 0) {
        log?.warn(
          { replicas: behind, waited_ms: SEEN_TIMEOUT_MS },
          'change feed: these processes did not confirm a change of keys or states in time; any read they remembered from before it has expired by now',
        );
      }
      return behind;
    },
    async record(next, request) {
      rules = next;
      if (request !== undefined) answered = Math.max(answered ?? 0, request);
      await writeRecord();
    },
    onReloadAsked(handler) {
      reloadAsked = handler;
    },
    async close() {
      closed = true;
      clearInterval(heartbeat);
      if (reconnect) clearTimeout(reconnect);
      const last = client;
      if (last) await onFeed('DELETE FROM replicas WHERE id = $1', [replicaId]).catch(() => {});
      client = null;
      last?.removeAllListeners('end');
      await last?.end().catch(() => {});
    },
  };
}
