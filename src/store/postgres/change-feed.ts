// The change feed of the PostgreSQL engine: how a gateway process learns, before its next request,
// that another process (a replica, the CLI) changed a key or a migration state.
//
// A trigger bumps change_feed.version and notifies it at COMMIT (change-feed-schema.ts). Each process
// LISTENs on a connection of its own; a notification moves its generation, which makes the remembered
// reads go (src/store/hot-reads.ts), and only then is the version recorded as seen in `replicas`. The
// process that made a change waits, after its COMMIT, until every live process has seen it
// (`awaitSeen`), so the change applies to the very next request on any replica. While the feed's
// connection is down, nothing may be remembered: every call to `generation()` is a new one.
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { CHANGE_FEED_CHANNEL } from './change-feed-schema.js';

/** How often a process says it is alive; a process silent for LIVE_WITHIN_MS is not waited for. */
export const HEARTBEAT_MS = 2_000;
export const LIVE_WITHIN_MS = 10_000;
/** How long a change waits for every live process to have seen it before answering anyway. */
export const SEEN_TIMEOUT_MS = 2_000;
const SEEN_POLL_MS = 10;
const RECONNECT_MS = 1_000;
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
  close(): Promise<void>;
}

export interface FeedOptions {
  url: string;
  connectTimeoutMs: number;
  /** Statements of the feed (the waits included) on the store's pool. */
  pool: pg.Pool;
  log?: FeedLog;
}

export async function startChangeFeed(options: FeedOptions): Promise<ChangeFeed> {
  const replicaId = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const log = options.log;
  let generation = 0;
  let client: pg.Client | null = null;
  let closed = false;
  let reconnect: NodeJS.Timeout | null = null;
  let acking: Promise<unknown> = Promise.resolve();
  let registered = false;

  const record = (version: string) =>
    options.pool.query({
      name: 'feed.seen',
      text: 'UPDATE replicas SET seen_version = greatest(seen_version, $2::bigint), heartbeat_at = now() WHERE id = $1',
      values: [replicaId, version],
    });

  const connect = async (): Promise<void> => {
    const next = new pg.Client({ connectionString: options.url, connectionTimeoutMillis: options.connectTimeoutMs, application_name: 'lead-gateway change feed' });
    next.on('error', (error) => lost(next, error));
    next.on('end', () => lost(next, null));
    next.on('notification', (message) => {
      if (message.channel !== CHANGE_FEED_CHANNEL || client !== next) return;
      generation++;
      const version = message.payload ?? '0';
      // In order, so a later version is never overtaken by an earlier one.
      acking = acking.then(() => record(version)).catch((error: Error) => log?.warn({ err: error }, 'change feed: recording a seen change failed'));
    });
    await next.connect();
    await next.query(`LISTEN ${CHANGE_FEED_CHANNEL}`);
    client = next;
    registered = false;
    await register();
  };

  /**
   * Joins the processes a change waits for. Listening already, then reading the version: a change
   * committed in between is notified too. A database that takes no writes (a standby) cannot hold
   * the row: until a heartbeat manages it, this process remembers nothing.
   */
  const register = async (): Promise<void> => {
    const on = client;
    if (!on) return;
    try {
      const { rows } = await on.query<{ version: string }>('SELECT version::text AS version FROM change_feed WHERE id = 1');
      generation++;
      await on.query(
        `INSERT INTO replicas (id, seen_version, heartbeat_at) VALUES ($1, $2, now())
         ON CONFLICT (id) DO UPDATE SET seen_version = excluded.seen_version, heartbeat_at = now()`,
        [replicaId, rows[0]!.version],
      );
      if (client === on) registered = true;
    } catch (error) {
      log?.warn({ err: error, replica: replicaId }, 'change feed: this process cannot record itself; it remembers no key or state until it can');
    }
  };

  const scheduleReconnect = () => {
    if (closed || reconnect) return;
    reconnect = setTimeout(() => {
      reconnect = null;
      connect().then(
        () => log?.info({ replica: replicaId }, 'change feed reconnected; remembered reads start afresh'),
        () => scheduleReconnect(),
      );
    }, RECONNECT_MS);
    reconnect.unref();
  };

  function lost(which: pg.Client, error: Error | null): void {
    if (client !== which) return;
    client = null;
    generation++;
    which.end().catch(() => {});
    if (!closed) {
      log?.warn({ err: error ?? undefined, replica: replicaId }, 'change feed lost its connection: keys and states are read from the database on every request until it is back');
      scheduleReconnect();
    }
  }

  await options.pool.query(`DELETE FROM replicas WHERE heartbeat_at < now() - interval '${FORGET_AFTER}'`).catch(() => {});
  await connect();
  const heartbeat = setInterval(() => {
    if (!client) return;
    if (!registered) void register();
    else options.pool.query({ name: 'feed.heartbeat', text: 'UPDATE replicas SET heartbeat_at = now() WHERE id = $1', values: [replicaId] }).catch(() => {});
  }, HEARTBEAT_MS);
  heartbeat.unref();

  return {
    replicaId,
    // Without a listening connection no notification can arrive, so no read may be kept.
    generation: () => (client && registered ? generation : ++generation),
    async awaitSeen() {
      const deadline = Date.now() + SEEN_TIMEOUT_MS;
      for (;;) {
        const { rows } = await options.pool.query<{ id: string }>({
          name: 'feed.behind',
          text: `SELECT id FROM replicas WHERE heartbeat_at > now() - make_interval(secs => $1::double precision / 1000)
                 AND seen_version < (SELECT version FROM change_feed WHERE id = 1) ORDER BY id`,
          values: [LIVE_WITHIN_MS],
        });
        if (rows.length === 0) return [];
        if (Date.now() >= deadline) {
          const behind = rows.map((r) => r.id);
          log?.warn({ replicas: behind, waited_ms: SEEN_TIMEOUT_MS }, 'change feed: a change of keys or states is not yet applied by these processes; they may accept an old key for up to a second');
          return behind;
        }
        await new Promise((resolve) => setTimeout(resolve, SEEN_POLL_MS));
      }
    },
    async close() {
      closed = true;
      clearInterval(heartbeat);
      if (reconnect) clearTimeout(reconnect);
      const last = client;
      client = null;
      await acking;
      await options.pool.query('DELETE FROM replicas WHERE id = $1', [replicaId]).catch(() => {});
      await last?.end().catch(() => {});
    },
  };
}
