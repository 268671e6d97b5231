// The connection pool of the PostgreSQL engine: node-postgres (chosen by measurement: bench/results/LOG.md,
// "The PostgreSQL driver: measured before choosing"), with an `error` listener wherever the driver can
// emit one and timeouts on every statement.
import pg from 'pg';

export interface PoolOptions {
  /** postgres://user:password@host:port/database */
  url: string;
  /** Most connections open at once (default 10). */
  poolSize?: number;
  /** Longest a statement may run on the server before it is cancelled (default 5 s). */
  statementTimeoutMs?: number;
  /** Longest a unit may wait for a free connection or a new one (default 5 s). */
  connectTimeoutMs?: number;
  /** Called with an error of a connection nobody was using (a restarted server, a cut socket). */
  onIdleError?: (error: Error) => void;
  /** Told the name (or text) of every statement sent, before it goes. */
  onStatement?: (statement: string) => void;
  /**
   * Told of every round trip, with the statement that starts it: a statement sent while none of its
   * connection's earlier statements waits for an answer (what was sent had all been answered, so the
   * sender had waited for them). Statements sent behind one still in flight ride on its trip.
   */
  onRoundTrip?: (statement: string) => void;
}

export const DEFAULT_POOL_SIZE = 10;
const DEFAULT_STATEMENT_TIMEOUT_MS = 5_000;
const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
/** The client-side bound beyond the server's own: a statement whose answer never comes (a silent network). */
const QUERY_TIMEOUT_SLACK_MS = 1_000;

/** Query parameters node-postgres reads as secrets (`?password=` stands in for the userinfo's). */
const SECRET_PARAMETERS = ['password', 'sslpassword'];

/** The URL with its passwords masked, in the userinfo or the query: what logs and errors may show. */
export const safeLocation = (url: string): string => {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    for (const name of SECRET_PARAMETERS) if (parsed.searchParams.has(name)) parsed.searchParams.set(name, '***');
    return parsed.toString();
  } catch {
    return 'postgres://(an unreadable URL)';
  }
};

/**
 * A pool whose connections never crash the process: a server that terminates an idle connection
 * (restart, failover, pg_terminate_backend) makes the driver emit `error` on the pool, and on a
 * checked-out client between two of its queries; an `error` event without a listener is thrown.
 * The failed connection is dropped by the pool and the next unit opens a new one.
 */
export function createPool(options: PoolOptions): pg.Pool {
  const statementTimeout = options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
  const onIdleError = options.onIdleError ?? (() => {});
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize ?? DEFAULT_POOL_SIZE,
    connectionTimeoutMillis: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    statement_timeout: statementTimeout,
    query_timeout: statementTimeout + QUERY_TIMEOUT_SLACK_MS,
    // A lock or a transaction left open by a broken unit is ended by the server, not kept forever.
    lock_timeout: statementTimeout,
    idle_in_transaction_session_timeout: statementTimeout * 2,
    application_name: 'lead-gateway',
    // A unit's statements that need no answer in between go out together, each with its own Sync
    // (node-postgres 8.23's pipelining): docs/architecture.md, "How a unit is sent on PostgreSQL".
    // The pool's own one-statement queries (peeks) are unchanged by it.
    pipeline: true,
  });
  pool.on('error', onIdleError);
  // Emitted once per new connection, checked out or idle later: every client gets its listener.
  pool.on('connect', (client) => {
    client.on('error', onIdleError);
    coalesceWrites(client);
    if (options.onStatement || options.onRoundTrip) watchStatements(client, options.onStatement, options.onRoundTrip);
  });
  return pool;
}

/**
 * The statements a client is given in one turn of the event loop leave in one write to its socket.
 * node-postgres writes each statement as it is given (one `writev` of its Parse, Bind, Describe,
 * Execute and Sync; BEGIN and COMMIT a `write` of their own): a unit's first round trip (BEGIN, the
 * event's look-up, the person locks, the match and the held reads) was 6 system calls, each one also
 * running the server's side of the loopback TCP, the most of the gateway's CPU per new lead on
 * PostgreSQL (bench/results/LOG.md, "The gateway's CPU on PostgreSQL"). The socket is corked at the
 * turn's first statement and uncorked once the turn's callbacks and promise reactions have run
 * (`setImmediate`), before the loop waits for any answer: nothing waits longer on the wire.
 */
function coalesceWrites(client: pg.PoolClient): void {
  let corked: { uncork(): void } | null = null;
  const uncork = () => {
    corked?.uncork();
    corked = null;
  };
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    if (corked === null) {
      // Read at each turn: a TLS connection's socket is another stream than the one it started on.
      const stream = (client as unknown as { connection: { stream: { cork(): void; uncork(): void } } }).connection
        .stream;
      stream.cork();
      corked = stream;
      setImmediate(uncork);
    }
    return query(...args);
  };
}

/**
 * Tells `onStatement` of each statement the client sends, and `onRoundTrip` of each one sent while
 * none of the client's statements is in flight. The pool's own one-statement queries pass a callback;
 * units await a promise.
 */
function watchStatements(
  client: pg.PoolClient,
  onStatement?: (statement: string) => void,
  onRoundTrip?: (statement: string) => void,
): void {
  let inFlight = 0;
  const pipelined = (client as { pipeline?: boolean }).pipeline === true;
  const answered = () => void inFlight--;
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    const config = args[0] as string | { name?: string; text?: string };
    const name = typeof config === 'string' ? config : (config.name ?? config.text ?? '');
    onStatement?.(name);
    // Without pipelining the driver queues a statement until the one before has answered: a trip each.
    if (inFlight === 0 || !pipelined) onRoundTrip?.(name);
    inFlight++;
    const last = args.length - 1;
    if (typeof args[last] === 'function') {
      const callback = args[last] as (...answer: unknown[]) => void;
      args[last] = (...answer: unknown[]) => {
        answered();
        callback(...answer);
      };
      return query(...args);
    }
    const result = query(...args) as Promise<unknown>;
    // The counting branch only: the caller handles the promise's failure on the promise it was handed.
    result.then(answered, answered);
    return result;
  };
}
