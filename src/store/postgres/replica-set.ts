// The replica set on PostgreSQL: the `replicas` table the change feed keeps (change-feed.ts), read on
// the store's pool, and reload requests counted in `rules_reloads` and notified to every process.
import type pg from 'pg';
import type { ReplicaRecord, ReplicaSet, RulesRecord } from '../replicas.js';
import type { ChangeFeed } from './change-feed.js';
import { LIVE_WITHIN_MS } from './change-feed.js';
import { RULES_RELOAD_CHANNEL } from './replica-rules-schema.js';
import { toStoreError } from './errors.js';

interface ReplicaRow {
  id: string;
  host: string | null;
  pid: number | null;
  started_at: Date | null;
  heartbeat_at: Date;
  rules_version: string | null;
  rules_loaded_at: Date | null;
  rules_reload_error: RulesRecord['reloadError'];
  reload_answered: string;
}

const rowToReplica = (row: ReplicaRow): ReplicaRecord => ({
  id: row.id,
  host: row.host,
  pid: row.pid,
  startedAt: row.started_at?.toISOString() ?? null,
  heartbeatAt: row.heartbeat_at.toISOString(),
  rules:
    row.rules_version === null
      ? null
      : {
          version: row.rules_version,
          loadedAt: row.rules_loaded_at?.toISOString() ?? '',
          reloadError: row.rules_reload_error,
        },
  answered: Number(row.reload_answered),
});

/** A database that cannot be reached is the store's own StoreUnavailableError (a 503 to an admin call). */
const unavailable = (error: unknown): never => {
  throw toStoreError(error);
};

export function postgresReplicaSet(pool: pg.Pool, feed: ChangeFeed): ReplicaSet {
  return {
    self: feed.replicaId,
    record: (rules, answered) => feed.record(rules, answered),
    onReloadAsked: (handler) => feed.onReloadAsked(handler),
    async askReload() {
      // One statement: the count moves and the notification goes out at its commit, to every listener.
      const { rows } = await pool
        .query<{ request: string }>({
          name: 'replicas.ask-reload',
          text: `WITH r AS (UPDATE rules_reloads SET request = request + 1 WHERE id = 1 RETURNING request)
               SELECT request, pg_notify('${RULES_RELOAD_CHANNEL}', request || ':' || $1) FROM r`,
          values: [feed.replicaId],
        })
        .catch(unavailable);
      return Number(rows[0]!.request);
    },
    async live() {
      const { rows } = await pool
        .query<ReplicaRow>({
          name: 'replicas.live',
          text: `SELECT id, host, pid, started_at, heartbeat_at, rules_version, rules_loaded_at, rules_reload_error, reload_answered
               FROM replicas WHERE heartbeat_at > now() - make_interval(secs => $1::double precision / 1000) ORDER BY id`,
          values: [LIVE_WITHIN_MS],
        })
        .catch(unavailable);
      return rows.map(rowToReplica);
    },
  };
}
