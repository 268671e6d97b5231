// The PostgreSQL schema: an append-only list of migrations, each applied once in its own transaction
// and recorded in schema_migrations, the whole run under an advisory lock so that replicas starting
// at once take turns. Equal in meaning to the SQLite schema after all its migrations (same tables,
// columns, uniqueness and indexes, but for the measured cuts docs/architecture.md lists); times stay
// ISO text (the records' own strings, ordered as text), JSON is jsonb, money is numeric, and the
// counts SQLite keeps by triggers are kept by triggers here.
import type pg from 'pg';
import { schema } from './schema.js';
import { changeFeedSchema } from './change-feed-schema.js';
import { stripedCountsSchema } from './striped-counts-schema.js';
import { consoleSchema } from './console-schema.js';
import { replicaRulesSchema } from './replica-rules-schema.js';
import { answerKeepSchema } from './answer-keep-schema.js';
import { portingSchema } from './porting-schema.js';
import type { SchemaState } from '../store.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const migrations: Migration[] = [
  { version: 1, name: 'the schema of SQLite migration 12', sql: schema },
  { version: 2, name: 'the change feed of keys and migration states', sql: changeFeedSchema },
  { version: 3, name: 'lead counts spread over stripes', sql: stripedCountsSchema },
  // The shape rate-limiter-flexible's RateLimiterPostgres uses (src/rate-limit/shared-limiter.ts). Made
  // here, under the migration lock, rather than by the library at every start: replicas starting
  // together raced to create it, and a read-only database refused even CREATE TABLE IF NOT EXISTS.
  {
    version: 4,
    name: 'the table of the shared rate limits',
    sql: `CREATE TABLE IF NOT EXISTS rate_limits (key varchar(255) PRIMARY KEY, points integer NOT NULL DEFAULT 0, expire bigint)`,
  },
  { version: 5, name: 'the rules each replica runs, and reload requests to every replica', sql: replicaRulesSchema },
  // The same tables as SQLite migration 13.
  { version: 6, name: 'console users and sessions', sql: consoleSchema },
  // The same table as SQLite migration 14; not api_keys itself, whose changes every replica is told of.
  {
    version: 7,
    name: 'when each key was last used',
    sql: 'CREATE TABLE key_usage (key_id text COLLATE "C" PRIMARY KEY, last_used_at text COLLATE "C" NOT NULL)',
  },
  // As SQLite migration 15: the counts are kept in lead_counts, and nothing reads leads by status or group.
  {
    version: 8,
    name: 'no indexes of leads by status and group',
    sql: 'DROP INDEX IF EXISTS leads_status; DROP INDEX IF EXISTS leads_group',
  },
  // jsonb keeps no member order (shorter keys first), so a replay answered the recorded outcome with
  // its members reordered. Text keeps it byte for byte, as SQLite's column always did. Rows recorded
  // before keep jsonb's order: their text is jsonb's, and their replays answer in that order as before.
  {
    version: 9,
    name: 'the recorded outcome of an event as the text it was recorded with',
    sql: 'ALTER TABLE submissions ALTER COLUMN outcome TYPE text COLLATE "C" USING outcome::text',
  },
  // As SQLite migration 16 ("kept unmapped and invalid answers counted per key, ...").
  { version: 10, name: 'answer caps and retention', sql: answerKeepSchema },
  // Every answer of every lead added an entry to it, and no statement reads answers by their
  // submission (bench/results/LOG.md, "PostgreSQL's own work per new lead"). SQLite keeps its twin.
  { version: 11, name: 'no index of answers by submission', sql: 'DROP INDEX IF EXISTS answers_submission' },
  // As SQLite migration 17: the v1 key an action issued, sealed (src/console/flash.ts), until shown once.
  {
    version: 12,
    name: 'a one-time value for the next page of a console session',
    sql: 'ALTER TABLE console_sessions ADD COLUMN flash text COLLATE "C"',
  },
  // As SQLite migration 18: two new tables, nothing else touched.
  { version: 13, name: 'the ported flag and the answers 404s', sql: portingSchema },
  // As SQLite migration 19: v1's test keys, and their calls counted apart from v1's (docs/api.md, "Test mode").
  {
    version: 14,
    name: 'test keys and their calls counted apart',
    sql: `
      ALTER TABLE api_keys DROP CONSTRAINT api_keys_kind_check;
      ALTER TABLE api_keys ADD CONSTRAINT api_keys_kind_check CHECK (kind IN ('v1', 'legacy', 'test'));
      ALTER TABLE api_usage DROP CONSTRAINT api_usage_interface_check;
      ALTER TABLE api_usage ADD CONSTRAINT api_usage_interface_check CHECK (interface IN ('v1', 'legacy', 'v1-test'));
    `,
  },
  // As SQLite migration 20: the sample is JSON text,
  // not jsonb, so its members keep the order the bot sent them in.
  {
    version: 15,
    name: 'legacy samples for the porting guide',
    sql: `CREATE TABLE legacy_samples (
      integration_id text COLLATE "C" NOT NULL,
      route          text COLLATE "C" NOT NULL,
      at             text COLLATE "C" NOT NULL,
      sample         text COLLATE "C" NOT NULL,
      PRIMARY KEY (integration_id, route)
    );
    CREATE INDEX legacy_samples_age ON legacy_samples (at);`,
  },
  // Each of these was checked by a SELECT ... FOR KEY SHARE at the end of every new lead's write
  // statement (seven a lead), a third of its buffer reads and a lock record each. The units write
  // these rows only for a person and a lead they inserted in the same statement or hold locked, and
  // nothing deletes a person or a lead (docs/architecture.md, "References kept by the units").
  // SQLite keeps its foreign keys.
  {
    version: 16,
    name: 'no foreign keys on the rows a new lead writes',
    sql: `
      ALTER TABLE contact_bindings DROP CONSTRAINT IF EXISTS contact_bindings_contact_id_fkey;
      ALTER TABLE leads DROP CONSTRAINT IF EXISTS leads_contact_id_fkey;
      ALTER TABLE lead_tags DROP CONSTRAINT IF EXISTS lead_tags_lead_id_fkey;
      ALTER TABLE custom_field_values DROP CONSTRAINT IF EXISTS custom_field_values_lead_id_fkey;
      ALTER TABLE answers DROP CONSTRAINT IF EXISTS answers_lead_id_fkey;
    `,
  },
  // Every field value entered the index of its id, which no statement reads: (lead_id, field_id),
  // the key every read and the upsert use, becomes the primary key (bench/results/LOG.md, "PostgreSQL's
  // own work, cut"). The id column stays, with its values. SQLite keeps its id as the key.
  {
    version: 17,
    name: 'field values keyed by their lead and field only',
    sql: `
      ALTER TABLE custom_field_values DROP CONSTRAINT custom_field_values_pkey;
      ALTER TABLE custom_field_values DROP CONSTRAINT custom_field_values_lead_id_field_id_key,
        ADD CONSTRAINT custom_field_values_pkey PRIMARY KEY (lead_id, field_id);
    `,
  },
  // The person's latest lead (`holds.latestLocked`, `leads.lockLatest`) is ordered by created_at, then id.
  // With the id in the index the order is the index's own, and a plan made on an empty table (a
  // fresh deployment: the held reads' plan is made once per connection, their person named by a
  // setting, not a parameter) still scans this index by the person instead of filtering every live
  // lead through leads_integration_page, which grows with the integration's leads (bench/results/LOG.md,
  // "One unit, two round trips").
  {
    version: 18,
    name: 'the latest lead of a person in the order of its index',
    sql: `
      DROP INDEX IF EXISTS leads_contact;
      CREATE INDEX leads_contact ON leads (contact_id, created_at, id) WHERE deleted_at IS NULL;
    `,
  },
  // Live persons found by test calls (docs/api.md, "Test mode"); SQLite migration 21 makes the same.
  {
    version: 19,
    name: 'live persons found by test calls',
    sql: `
      CREATE TABLE test_matches (
        integration_id text COLLATE "C" NOT NULL,
        key_id         text COLLATE "C" NOT NULL,
        contact_id     text COLLATE "C" NOT NULL,
        lead_id        text COLLATE "C",
        endpoint       text COLLATE "C" NOT NULL CHECK (endpoint IN ('leads', 'answers')),
        event_id       text COLLATE "C" NOT NULL,
        matched_by     text COLLATE "C" NOT NULL,
        own            boolean NOT NULL,
        calls          bigint NOT NULL,
        first_at       text COLLATE "C" NOT NULL,
        last_at        text COLLATE "C" NOT NULL,
        PRIMARY KEY (integration_id, key_id, contact_id)
      );
      CREATE INDEX test_matches_age ON test_matches (last_at);
      CREATE INDEX test_matches_newest ON test_matches (integration_id, first_at, key_id, contact_id);
    `,
  },
  // Keys the console issued and no page has shown yet; SQLite migration 22 makes the same.
  {
    version: 20,
    name: 'keys the console issued and no page has shown yet',
    sql: `
      CREATE TABLE console_unshown_keys (
        key_id         text COLLATE "C" PRIMARY KEY,
        integration_id text COLLATE "C" NOT NULL,
        prefix         text COLLATE "C" NOT NULL,
        id_hash        text COLLATE "C" NOT NULL,
        issued_at      text COLLATE "C" NOT NULL
      );
      CREATE INDEX console_unshown_keys_session ON console_unshown_keys (id_hash);
    `,
  },
  // Ignored legacy names by age, for their retention; SQLite migration 23 makes the same.
  {
    version: 21,
    name: 'ignored legacy names by age, for their retention',
    sql: 'CREATE INDEX ignored_fields_age ON ignored_fields (last_seen)',
  },
  // Unlinked legacy leads marked, kept so by triggers; SQLite migration 24 makes the same (and says why).
  {
    version: 22,
    name: 'unlinked legacy leads marked, kept so by triggers',
    sql: `
      ALTER TABLE leads ADD COLUMN unlinked_legacy boolean NOT NULL DEFAULT false;
      UPDATE leads l SET unlinked_legacy = true WHERE origin = 'legacy' AND integration_id IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM contact_bindings b WHERE b.integration_id = l.integration_id AND b.contact_id = l.contact_id);
      CREATE INDEX leads_unlinked_legacy ON leads (integration_id, created_at, id) WHERE unlinked_legacy AND deleted_at IS NULL;
      CREATE FUNCTION mark_unlinked_legacy_lead() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        NEW.unlinked_legacy := NOT EXISTS (SELECT 1 FROM contact_bindings b WHERE b.integration_id = NEW.integration_id AND b.contact_id = NEW.contact_id);
        RETURN NEW;
      END $$;
      CREATE TRIGGER unlinked_legacy_lead BEFORE INSERT ON leads
        FOR EACH ROW WHEN (NEW.origin = 'legacy' AND NEW.integration_id IS NOT NULL) EXECUTE FUNCTION mark_unlinked_legacy_lead();
      CREATE FUNCTION mark_unlinked_legacy_binding() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          UPDATE leads SET unlinked_legacy = false WHERE contact_id = NEW.contact_id AND deleted_at IS NULL AND integration_id = NEW.integration_id AND unlinked_legacy;
        ELSE
          UPDATE leads SET unlinked_legacy = true WHERE contact_id = OLD.contact_id AND deleted_at IS NULL AND integration_id = OLD.integration_id AND origin = 'legacy'
            AND NOT EXISTS (SELECT 1 FROM contact_bindings b WHERE b.integration_id = OLD.integration_id AND b.contact_id = OLD.contact_id);
        END IF;
        RETURN NULL;
      END $$;
      CREATE TRIGGER unlinked_legacy_binding AFTER INSERT OR DELETE ON contact_bindings FOR EACH ROW EXECUTE FUNCTION mark_unlinked_legacy_binding();
    `,
  },
  // A unit's person and what it decides on, held by one statement (repos/holds.ts): the match as a
  // function of its own (repos/contacts.ts), and the holds (the person keys' locks, the match, the row
  // locks, the values) as one PL/pgSQL function, whose every query takes a snapshot of its own once the
  // lock before it is held. No SQLite counterpart: SQLite makes the
  // same reads one after the other (holdsInOrder).
  {
    version: 23,
    name: 'a unit holds its person in one statement',
    sql: `
      CREATE FUNCTION lead_gateway_match(p_workspace text, p_integration text, p_external text, p_phone text, p_email text)
      RETURNS TABLE (matched_by text, bound_contact_id text, id text, workspace_id text, first_name text, last_name text,
                     phone text, email text, created_at text, updated_at text)
      LANGUAGE sql STABLE AS $$
        SELECT found.matched_by, found.bound_contact_id, found.id, found.workspace_id, found.first_name, found.last_name,
               found.phone, found.email, found.created_at, found.updated_at
        FROM (
          (SELECT 1 AS priority, 'binding' AS matched_by, b.contact_id AS bound_contact_id, c.id, c.workspace_id, c.first_name,
                  c.last_name, c.phone, c.email, c.created_at, c.updated_at
           FROM contact_bindings b LEFT JOIN contacts c ON c.id = b.contact_id
           WHERE b.integration_id = p_integration AND b.external_contact_id = p_external)
          UNION ALL
          (SELECT 2, 'phone', NULL, c.id, c.workspace_id, c.first_name, c.last_name, c.phone, c.email, c.created_at, c.updated_at
           FROM contacts c WHERE c.workspace_id = p_workspace AND c.phone = p_phone ORDER BY c.updated_at DESC, c.id DESC LIMIT 1)
          UNION ALL
          (SELECT 3, 'email', NULL, c.id, c.workspace_id, c.first_name, c.last_name, c.phone, c.email, c.created_at, c.updated_at
           FROM contacts c WHERE c.workspace_id = p_workspace AND c.email_norm = p_email ORDER BY c.updated_at DESC, c.id DESC LIMIT 1)
        ) AS found ORDER BY found.priority LIMIT 1
      $$;

      CREATE FUNCTION lead_gateway_hold(p_person boolean, p_workspace text, p_integration text, p_external text, p_phone text,
                                        p_email text, p_field_ids text[], p_locks text[])
      RETURNS jsonb LANGUAGE plpgsql VOLATILE AS $$
      DECLARE
        f record;
        locked jsonb;
        latest leads%ROWTYPE;
        vals jsonb := '[]';
      BEGIN
        -- Each query below reads as of its own start (READ COMMITTED, a volatile function): after the
        -- lock the query before it waited for, so it sees what that lock's holder committed. The person
        -- keys' advisory locks first, in ascending order of their ids (as repos/locks.ts takes them).
        IF cardinality(p_locks) > 0 THEN
          PERFORM count(pg_advisory_xact_lock(id)) FROM (SELECT DISTINCT hashtextextended(name, 0) AS id FROM unnest(p_locks) AS name ORDER BY 1) AS ids;
        END IF;
        IF p_person THEN
          SELECT * INTO f FROM lead_gateway_match(p_workspace, p_integration, p_external, p_phone, p_email);
        ELSE
          SELECT 'binding'::text AS matched_by, b.contact_id AS bound_contact_id, c.id, c.workspace_id, c.first_name, c.last_name,
                 c.phone, c.email, c.created_at, c.updated_at
          INTO f FROM contact_bindings b LEFT JOIN contacts c ON c.id = b.contact_id
          WHERE b.integration_id = p_integration AND b.external_contact_id = p_external;
        END IF;
        IF NOT FOUND THEN
          RETURN jsonb_build_object('found', NULL);
        END IF;
        -- A binding whose person is not there comes back with its id alone (a broken reference).
        IF f.id IS NULL THEN
          RETURN jsonb_build_object('found', to_jsonb(f));
        END IF;
        IF p_person THEN
          SELECT to_jsonb(c) INTO locked FROM (
            SELECT id, workspace_id, first_name, last_name, phone, email, created_at, updated_at FROM contacts WHERE id = f.id FOR NO KEY UPDATE) c;
        END IF;
        -- A row a waited-for unit changed is answered in its committed version, deleted or not (the caller looks again).
        SELECT * INTO latest FROM leads WHERE id = (
          SELECT l.id FROM leads l WHERE l.contact_id = f.id AND l.deleted_at IS NULL ORDER BY l.created_at DESC, l.id DESC LIMIT 1)
        FOR NO KEY UPDATE;
        IF FOUND AND cardinality(p_field_ids) > 0 THEN
          SELECT coalesce(jsonb_agg(to_jsonb(v)), '[]') INTO vals FROM custom_field_values v WHERE v.lead_id = latest.id AND v.field_id = ANY(p_field_ids);
        END IF;
        RETURN jsonb_build_object('found', to_jsonb(f), 'locked', locked, 'latest', CASE WHEN latest.id IS NULL THEN NULL ELSE to_jsonb(latest) END, 'values', vals);
      END $$;
    `,
  },
  {
    version: 24,
    name: 'legacy calls refused in a brownout window, per window and route',
    // Written by the usage recorder's flush, read by the migration report; retention deletes a window's
    // rows once it started more than RETENTION_USAGE_DAYS ago, by brownout_refusals_age. SQLite migration
    // 25 makes the same.
    sql: `
      CREATE TABLE brownout_refusals (
        integration_id text COLLATE "C" NOT NULL,
        window_start   text COLLATE "C" NOT NULL,
        route          text COLLATE "C" NOT NULL,
        calls          bigint NOT NULL,
        last_at        text COLLATE "C" NOT NULL,
        PRIMARY KEY (integration_id, window_start, route)
      );
      CREATE INDEX brownout_refusals_age ON brownout_refusals (window_start);
    `,
  },
  {
    version: 25,
    name: 'scheduled switch-offs',
    // One row per integration, read by every replica's schedule runner through the due index (pending
    // rows only). SQLite migration 26 makes the same.
    sql: `
      CREATE TABLE switch_off_schedules (
        integration_id text COLLATE "C" NOT NULL PRIMARY KEY,
        at              text COLLATE "C" NOT NULL,
        force           integer NOT NULL,
        retry_minutes   integer NOT NULL,
        deadline        text COLLATE "C" NOT NULL,
        status          text COLLATE "C" NOT NULL CHECK (status IN ('pending', 'done', 'refused', 'cancelled')),
        attempts        integer NOT NULL,
        next_attempt_at text COLLATE "C" NOT NULL,
        last_attempt_at text COLLATE "C",
        last_refusal    text COLLATE "C",
        created_by      text COLLATE "C" NOT NULL,
        created_at      text COLLATE "C" NOT NULL,
        reason          text COLLATE "C"
      );
      CREATE INDEX switch_off_schedules_due ON switch_off_schedules (next_attempt_at) WHERE status = 'pending';
    `,
  },
  {
    version: 26,
    name: 'moments of the migration calendar told',
    // A brownout window's start and end, each told once (an audit entry, a log line) by whichever
    // replica records it first; retention deletes them after RETENTION_USAGE_DAYS. SQLite migration 27.
    sql: `
      CREATE TABLE calendar_moments (
        integration_id text COLLATE "C" NOT NULL,
        kind           text COLLATE "C" NOT NULL,
        at             text COLLATE "C" NOT NULL,
        recorded_at    text COLLATE "C" NOT NULL,
        PRIMARY KEY (integration_id, kind, at)
      );
      CREATE INDEX calendar_moments_age ON calendar_moments (at);
    `,
  },
  {
    version: 27,
    name: 'brownout windows set through the admin API',
    // Read by every replica's legacy gate as a remembered read (src/store/hot-reads.ts), so a change
    // announces itself on the change feed as a key or state change does; a row trigger, because
    // retention's batch delete often deletes nothing, and a statement trigger would announce that too.
    // Retention deletes a window once it ended RETENTION_USAGE_DAYS ago. SQLite migration 28.
    sql: `
      CREATE TABLE brownout_windows (
        id             text COLLATE "C" NOT NULL PRIMARY KEY,
        integration_id text COLLATE "C" NOT NULL,
        start_at       text COLLATE "C" NOT NULL,
        minutes        integer NOT NULL CHECK (minutes > 0),
        end_at         text COLLATE "C" NOT NULL,
        created_by     text COLLATE "C" NOT NULL,
        created_at     text COLLATE "C" NOT NULL
      );
      CREATE INDEX brownout_windows_integration ON brownout_windows (integration_id, start_at);
      CREATE INDEX brownout_windows_start ON brownout_windows (start_at);
      CREATE INDEX brownout_windows_end ON brownout_windows (end_at);
      CREATE TRIGGER brownout_windows_changed AFTER INSERT OR UPDATE OR DELETE ON brownout_windows
        FOR EACH ROW EXECUTE FUNCTION announce_change();
    `,
  },
  {
    version: 28,
    name: 'webhook endpoints and their outbox',
    // Outgoing events (docs/webhooks.md): the endpoints the service team subscribed, the events written
    // in the unit of the change that caused them, one delivery per event and endpoint, and each
    // attempt's outcome. A delivery is claimed by one statement through webhook_deliveries_due: a claim
    // moves next_attempt_at to the end of its lease, so a claim whose replica died comes due again.
    // Payloads are text: the bytes signed are the bytes resent. SQLite migration 29 makes the same.
    sql: `
      CREATE TABLE webhook_endpoints (
        id                   text COLLATE "C" NOT NULL PRIMARY KEY,
        url                  text COLLATE "C" NOT NULL,
        event_types          text COLLATE "C" NOT NULL,
        workspace_id         text COLLATE "C",
        description          text COLLATE "C",
        secret               text COLLATE "C" NOT NULL,
        previous_secret      text COLLATE "C",
        previous_secret_until text COLLATE "C",
        paused               integer NOT NULL DEFAULT 0,
        disabled_at          text COLLATE "C",
        disabled_reason      text COLLATE "C",
        dropped_deliveries   integer NOT NULL DEFAULT 0,
        created_by           text COLLATE "C" NOT NULL,
        created_at           text COLLATE "C" NOT NULL,
        updated_at           text COLLATE "C" NOT NULL
      );
      CREATE INDEX webhook_endpoints_workspace ON webhook_endpoints (workspace_id);
      CREATE TABLE webhook_events (
        id           text COLLATE "C" NOT NULL PRIMARY KEY,
        type         text COLLATE "C" NOT NULL,
        workspace_id text COLLATE "C",
        payload      text COLLATE "C" NOT NULL,
        created_at   text COLLATE "C" NOT NULL
      );
      CREATE INDEX webhook_events_age ON webhook_events (created_at);
      CREATE TABLE webhook_deliveries (
        id              text COLLATE "C" NOT NULL PRIMARY KEY,
        event_id        text COLLATE "C" NOT NULL REFERENCES webhook_events (id),
        endpoint_id     text COLLATE "C" NOT NULL REFERENCES webhook_endpoints (id),
        status          text COLLATE "C" NOT NULL CHECK (status IN ('pending', 'delivered', 'failed', 'dropped')),
        attempts        integer NOT NULL DEFAULT 0,
        next_attempt_at text COLLATE "C" NOT NULL,
        last_status     integer,
        last_error      text COLLATE "C",
        claimed_by      text COLLATE "C",
        claimed_until   text COLLATE "C",
        created_at      text COLLATE "C" NOT NULL,
        updated_at      text COLLATE "C" NOT NULL,
        UNIQUE (event_id, endpoint_id)
      );
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at);
      CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, status, created_at);
      CREATE TABLE webhook_attempts (
        id            text COLLATE "C" NOT NULL PRIMARY KEY,
        delivery_id   text COLLATE "C" NOT NULL REFERENCES webhook_deliveries (id),
        at            text COLLATE "C" NOT NULL,
        status_code   integer,
        duration_ms   integer NOT NULL,
        response_head text COLLATE "C",
        error         text COLLATE "C"
      );
      CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, at);
      CREATE INDEX webhook_attempts_age ON webhook_attempts (at);
    `,
  },
];

/**
 * How long a migrating process may wait for another's migrations, and run its own: the pool's
 * statement limits are for requests, while a migration may rewrite a large table.
 */
export const MIGRATION_TIMEOUT_MS = 30 * 60_000;

/** The advisory lock every migrating process takes: one key for this application's schema. */
export const MIGRATION_LOCK_KEY = 7_308_604_756_127_924_000n;

export class MigrationError extends Error {
  constructor(migration: Migration, cause: unknown) {
    super(`migration ${migration.version} (${migration.name}) failed: ${(cause as Error).message}`, { cause });
    this.name = 'MigrationError';
  }
}

/**
 * Applies every migration not yet recorded, in order; returns the schema version and the versions this call applied. Another
 * process migrating at the same moment waits on the lock, then finds them recorded and applies none.
 */
export async function migrate(pool: pg.Pool, list: Migration[] = migrations): Promise<SchemaState> {
  const client = await pool.connect();
  // The session's limits are lifted below, so it is closed when done, never handed to a request.
  let broken: Error | boolean = true;
  const query = <R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<pg.QueryResult<R>> => {
    // node-postgres honours a query's own query_timeout; its types do not list it.
    const config = { text, values, query_timeout: MIGRATION_TIMEOUT_MS };
    return client.query<R>(config);
  };
  try {
    await query(`SET statement_timeout = ${MIGRATION_TIMEOUT_MS}`);
    await query(`SET lock_timeout = ${MIGRATION_TIMEOUT_MS}`);
    await query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY.toString()]);
    try {
      // Created only when missing: an up-to-date database that takes no writes (a standby) still
      // opens, and its readiness check tells why nothing can be written.
      const exists = await query<{ found: string | null }>("SELECT to_regclass('schema_migrations') AS found");
      if (exists.rows[0]!.found === null)
        await query(`CREATE TABLE schema_migrations (
        version    integer PRIMARY KEY,
        name       text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
      const done = new Set(
        (await query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version),
      );
      const known = Math.max(...list.map((m) => m.version));
      const newest = Math.max(0, ...done);
      // A gateway rolled back to an older release must not write into a schema it does not know.
      if (newest > known)
        throw new Error(
          `the database schema is at version ${newest}, newer than this gateway's ${known}: run a gateway release that knows it`,
        );
      const applied: number[] = [];
      for (const migration of [...list].sort((a, b) => a.version - b.version)) {
        if (done.has(migration.version)) continue;
        try {
          await query('BEGIN');
          await query(migration.sql);
          await query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
            migration.version,
            migration.name,
          ]);
          await query('COMMIT');
        } catch (error) {
          await query('ROLLBACK').catch(() => {});
          throw new MigrationError(migration, error);
        }
        applied.push(migration.version);
      }
      return { version: Math.max(newest, ...applied), applied };
    } finally {
      // Closing the session releases the lock in any case; unlocking first lets the next replica go on at once.
      await query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY.toString()]).catch(
        (error: Error) => (broken = error),
      );
    }
  } finally {
    client.release(broken);
  }
}
