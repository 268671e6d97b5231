// The schema: an append-only list of migrations under PRAGMA user_version, each in its own transaction.
import type { Db } from './connection.js';

export interface Migration {
  version: number;
  name: string;
  up: (db: Db) => void;
}

export const migrations: Migration[] = [
  {
    version: 1,
    name: 'keys, contacts, leads, submissions',
    up: (db) =>
      db.exec(`
        CREATE TABLE api_keys (
          id             TEXT PRIMARY KEY,
          integration_id TEXT NOT NULL,
          kind           TEXT NOT NULL CHECK (kind IN ('v1', 'legacy')),
          prefix         TEXT NOT NULL,
          hash           TEXT NOT NULL UNIQUE,
          created_at     TEXT NOT NULL,
          created_by     TEXT NOT NULL,
          revoked_at     TEXT
        );
        CREATE INDEX api_keys_integration ON api_keys (integration_id);

        CREATE TABLE contacts (
          id           TEXT PRIMARY KEY,
          workspace_id TEXT NOT NULL,
          first_name   TEXT NOT NULL,
          last_name    TEXT,
          phone        TEXT,
          email        TEXT,
          email_norm   TEXT,
          created_at   TEXT NOT NULL,
          updated_at   TEXT NOT NULL
        );
        CREATE INDEX contacts_phone ON contacts (workspace_id, phone) WHERE phone IS NOT NULL;
        CREATE INDEX contacts_email ON contacts (workspace_id, email_norm) WHERE email_norm IS NOT NULL;

        CREATE TABLE contact_bindings (
          integration_id      TEXT NOT NULL,
          external_contact_id TEXT NOT NULL,
          contact_id          TEXT NOT NULL REFERENCES contacts (id),
          created_at          TEXT NOT NULL,
          PRIMARY KEY (integration_id, external_contact_id)
        ) WITHOUT ROWID;
        CREATE INDEX contact_bindings_contact ON contact_bindings (contact_id);

        CREATE TABLE leads (
          id             TEXT PRIMARY KEY,
          workspace_id   TEXT NOT NULL,
          contact_id     TEXT NOT NULL REFERENCES contacts (id),
          integration_id TEXT,
          first_name     TEXT NOT NULL,
          last_name      TEXT,
          phone          TEXT,
          email          TEXT,
          notes          TEXT,
          source         TEXT,
          invited_by     TEXT,
          stage_id       TEXT,
          status_id      TEXT,
          group_id       TEXT,
          assigned_to    TEXT,
          created_by     TEXT,
          closed_by      TEXT,
          closed_at      TEXT,
          close_outcome  TEXT,
          close_reason   TEXT,
          extra_data     TEXT,
          created_at     TEXT NOT NULL,
          updated_at     TEXT NOT NULL,
          deleted_at     TEXT
        );
        CREATE INDEX leads_contact ON leads (contact_id, created_at) WHERE deleted_at IS NULL;
        CREATE INDEX leads_status ON leads (status_id) WHERE deleted_at IS NULL;
        CREATE INDEX leads_group ON leads (group_id) WHERE deleted_at IS NULL;

        CREATE TABLE lead_tags (
          lead_id TEXT NOT NULL REFERENCES leads (id),
          tag_id  TEXT NOT NULL,
          PRIMARY KEY (lead_id, tag_id)
        ) WITHOUT ROWID;

        CREATE TABLE lead_comments (
          id          TEXT PRIMARY KEY,
          lead_id     TEXT NOT NULL REFERENCES leads (id),
          body        TEXT NOT NULL,
          author_kind TEXT NOT NULL,
          author_ref  TEXT,
          created_at  TEXT NOT NULL
        );
        CREATE INDEX lead_comments_lead ON lead_comments (lead_id);

        CREATE TABLE submissions (
          id             TEXT PRIMARY KEY,
          integration_id TEXT NOT NULL,
          endpoint       TEXT NOT NULL,
          event_id       TEXT NOT NULL,
          fingerprint    TEXT NOT NULL,
          body           TEXT NOT NULL,
          contact_id     TEXT,
          lead_id        TEXT,
          outcome        TEXT NOT NULL,
          needs_review   INTEGER NOT NULL DEFAULT 0,
          review_reason  TEXT,
          created_at     TEXT NOT NULL,
          UNIQUE (integration_id, endpoint, event_id)
        );
        CREATE INDEX submissions_review ON submissions (integration_id, created_at) WHERE needs_review = 1;
      `),
  },
  {
    version: 2,
    name: 'custom field values with provenance, the answer log',
    up: (db) =>
      db.exec(`
        CREATE TABLE custom_field_values (
          id              TEXT PRIMARY KEY,
          lead_id         TEXT NOT NULL REFERENCES leads (id),
          field_id        TEXT NOT NULL,
          text_value      TEXT,
          decimal_value   TEXT,
          boolean_value   INTEGER,
          date_value      TEXT,
          datetime_value  TEXT,
          option_id       TEXT,
          selected_options TEXT,
          written_by_kind TEXT NOT NULL CHECK (written_by_kind IN ('employee', 'import', 'automation', 'integration')),
          written_by_ref  TEXT,
          updated_at      TEXT NOT NULL,
          UNIQUE (lead_id, field_id)
        );

        CREATE TABLE answers (
          id             TEXT PRIMARY KEY,
          submission_id  TEXT NOT NULL,
          integration_id TEXT NOT NULL,
          lead_id        TEXT NOT NULL REFERENCES leads (id),
          answer_key     TEXT NOT NULL,
          raw_value      TEXT NOT NULL,
          outcome        TEXT NOT NULL CHECK (outcome IN ('written', 'unchanged', 'kept_existing', 'unmapped', 'invalid')),
          error          TEXT,
          field_id       TEXT,
          created_at     TEXT NOT NULL,
          applied_at     TEXT,
          applied_outcome TEXT
        );
        CREATE INDEX answers_submission ON answers (submission_id);
        CREATE INDEX answers_unmapped ON answers (integration_id, created_at)
          WHERE outcome = 'unmapped' AND applied_at IS NULL;
      `),
  },
  {
    version: 3,
    name: 'migration state, audit log, usage counters, lead origin',
    up: (db) =>
      db.exec(`
        CREATE TABLE integration_states (
          integration_id TEXT PRIMARY KEY,
          state          TEXT NOT NULL CHECK (state IN ('legacy', 'migrating', 'switched_off')),
          updated_at     TEXT NOT NULL
        ) WITHOUT ROWID;

        CREATE TABLE audit_log (
          id             TEXT PRIMARY KEY,
          integration_id TEXT NOT NULL,
          action         TEXT NOT NULL,
          from_state     TEXT,
          to_state       TEXT,
          actor          TEXT NOT NULL,
          reason         TEXT,
          details        TEXT,
          at             TEXT NOT NULL
        );
        CREATE INDEX audit_log_integration ON audit_log (integration_id, at);

        -- Calls per integration, interface and route, counted per hour.
        CREATE TABLE api_usage (
          integration_id TEXT NOT NULL,
          interface      TEXT NOT NULL CHECK (interface IN ('v1', 'legacy')),
          route          TEXT NOT NULL,
          hour           TEXT NOT NULL,
          calls          INTEGER NOT NULL,
          last_seen      TEXT NOT NULL,
          PRIMARY KEY (integration_id, interface, route, hour)
        ) WITHOUT ROWID;

        -- Legacy request members the gateway ignores (stage, tags, ...), counted.
        CREATE TABLE ignored_fields (
          integration_id TEXT NOT NULL,
          field          TEXT NOT NULL,
          calls          INTEGER NOT NULL,
          last_seen      TEXT NOT NULL,
          PRIMARY KEY (integration_id, field)
        ) WITHOUT ROWID;

        ALTER TABLE leads ADD COLUMN origin TEXT NOT NULL DEFAULT 'v1' CHECK (origin IN ('v1', 'legacy'));
        CREATE INDEX leads_legacy ON leads (integration_id) WHERE origin = 'legacy';
      `),
  },
  {
    version: 4,
    name: 'tags created through the deprecated interface',
    up: (db) =>
      db.exec(`
        CREATE TABLE legacy_tags (
          workspace_id TEXT NOT NULL,
          id           TEXT NOT NULL,
          name         TEXT NOT NULL,
          color        TEXT,
          created_at   TEXT NOT NULL,
          PRIMARY KEY (workspace_id, id)
        ) WITHOUT ROWID;
      `),
  },
  {
    version: 5,
    name: 'payments recorded through the deprecated interface',
    up: (db) =>
      db.exec(`
        CREATE TABLE lead_payments (
          id           TEXT PRIMARY KEY,
          lead_id      TEXT NOT NULL REFERENCES leads (id),
          amount_minor INTEGER NOT NULL,
          note         TEXT,
          created_at   TEXT NOT NULL
        );
        CREATE INDEX lead_payments_lead ON lead_payments (lead_id, created_at);
      `),
  },
  {
    version: 6,
    name: 'lead counts per status and group, kept by triggers',
    // Every rendered lead carries leads_count of its status and group. Counting them per response grew
    // with the table (a scan of every lead of that status); the triggers keep the figure for any writer.
    up: (db) =>
      db.exec(`
        CREATE TABLE lead_counts (
          kind    TEXT NOT NULL CHECK (kind IN ('status', 'group')),
          item_id TEXT NOT NULL,
          n       INTEGER NOT NULL,
          PRIMARY KEY (kind, item_id)
        ) WITHOUT ROWID;
        INSERT INTO lead_counts (kind, item_id, n)
          SELECT 'status', status_id, count(*) FROM leads WHERE status_id IS NOT NULL AND deleted_at IS NULL GROUP BY status_id;
        INSERT INTO lead_counts (kind, item_id, n)
          SELECT 'group', group_id, count(*) FROM leads WHERE group_id IS NOT NULL AND deleted_at IS NULL GROUP BY group_id;

        CREATE TRIGGER lead_counts_insert AFTER INSERT ON leads WHEN NEW.deleted_at IS NULL BEGIN
          INSERT INTO lead_counts (kind, item_id, n) SELECT 'status', NEW.status_id, 1 WHERE NEW.status_id IS NOT NULL
            ON CONFLICT (kind, item_id) DO UPDATE SET n = n + 1;
          INSERT INTO lead_counts (kind, item_id, n) SELECT 'group', NEW.group_id, 1 WHERE NEW.group_id IS NOT NULL
            ON CONFLICT (kind, item_id) DO UPDATE SET n = n + 1;
        END;
        CREATE TRIGGER lead_counts_update AFTER UPDATE OF status_id, group_id, deleted_at ON leads BEGIN
          UPDATE lead_counts SET n = n - 1 WHERE OLD.deleted_at IS NULL AND kind = 'status' AND item_id = OLD.status_id;
          UPDATE lead_counts SET n = n - 1 WHERE OLD.deleted_at IS NULL AND kind = 'group' AND item_id = OLD.group_id;
          INSERT INTO lead_counts (kind, item_id, n) SELECT 'status', NEW.status_id, 1 WHERE NEW.deleted_at IS NULL AND NEW.status_id IS NOT NULL
            ON CONFLICT (kind, item_id) DO UPDATE SET n = n + 1;
          INSERT INTO lead_counts (kind, item_id, n) SELECT 'group', NEW.group_id, 1 WHERE NEW.deleted_at IS NULL AND NEW.group_id IS NOT NULL
            ON CONFLICT (kind, item_id) DO UPDATE SET n = n + 1;
        END;
        CREATE TRIGGER lead_counts_delete AFTER DELETE ON leads WHEN OLD.deleted_at IS NULL BEGIN
          UPDATE lead_counts SET n = n - 1 WHERE kind = 'status' AND item_id = OLD.status_id;
          UPDATE lead_counts SET n = n - 1 WHERE kind = 'group' AND item_id = OLD.group_id;
        END;
      `),
  },
  {
    version: 7,
    name: 'imported legacy key prefixes no longer reveal short keys',
    // Imported keys kept their first 6 characters in clear, which all but gives away a short key; the
    // length is unknown now, so every such prefix is cleared, in the key list and in the audit log.
    up: (db) =>
      db.exec(`
        UPDATE api_keys SET prefix = '' WHERE kind = 'legacy' AND prefix NOT LIKE 'sha256:%';
        UPDATE audit_log SET details = json_set(details, '$.prefix', '')
          WHERE action = 'legacy_key_imported' AND json_extract(details, '$.prefix') NOT LIKE 'sha256:%';
      `),
  },
  {
    version: 8,
    name: 'a row that the readiness check rewrites',
    // /readyz commits a real write: an empty transaction commits nothing and passes on a read-only
    // file or a full disk.
    up: (db) =>
      db.exec('CREATE TABLE readiness_probe (id INTEGER PRIMARY KEY CHECK (id = 1), checked_at TEXT NOT NULL)'),
  },
  {
    version: 9,
    name: 'successful calls counted apart from all calls',
    // The readiness verdict asks whether the v1 bot works, which a run of 422s does not show. Rows
    // written before count no successes: the next successful call sets them.
    up: (db) =>
      db.exec(`
        ALTER TABLE api_usage ADD COLUMN ok_calls INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE api_usage ADD COLUMN last_ok TEXT;
      `),
  },
  {
    version: 10,
    name: 'legacy lead pages read by index, lead counts per integration kept by triggers',
    // GET leads/ of the deprecated interface read every lead of the workspace to serve one page (no
    // index on integration_id) and counted them all for `count`. The index serves a page by keyset
    // (created_at, id) from where the previous page ended; the triggers keep the count.
    up: (db) =>
      db.exec(`
        CREATE INDEX leads_integration_page ON leads (integration_id, created_at, id) WHERE deleted_at IS NULL;
        CREATE TABLE integration_lead_counts (
          integration_id TEXT PRIMARY KEY,
          n              INTEGER NOT NULL
        ) WITHOUT ROWID;
        INSERT INTO integration_lead_counts (integration_id, n)
          SELECT integration_id, count(*) FROM leads WHERE integration_id IS NOT NULL AND deleted_at IS NULL GROUP BY integration_id;

        CREATE TRIGGER integration_lead_counts_insert AFTER INSERT ON leads
          WHEN NEW.deleted_at IS NULL AND NEW.integration_id IS NOT NULL BEGIN
          INSERT INTO integration_lead_counts (integration_id, n) VALUES (NEW.integration_id, 1)
            ON CONFLICT (integration_id) DO UPDATE SET n = n + 1;
        END;
        CREATE TRIGGER integration_lead_counts_update AFTER UPDATE OF integration_id, deleted_at ON leads BEGIN
          UPDATE integration_lead_counts SET n = n - 1 WHERE OLD.deleted_at IS NULL AND integration_id = OLD.integration_id;
          INSERT INTO integration_lead_counts (integration_id, n)
            SELECT NEW.integration_id, 1 WHERE NEW.deleted_at IS NULL AND NEW.integration_id IS NOT NULL
            ON CONFLICT (integration_id) DO UPDATE SET n = n + 1;
        END;
        CREATE TRIGGER integration_lead_counts_delete AFTER DELETE ON leads
          WHEN OLD.deleted_at IS NULL AND OLD.integration_id IS NOT NULL BEGIN
          UPDATE integration_lead_counts SET n = n - 1 WHERE integration_id = OLD.integration_id;
        END;
      `),
  },
  {
    version: 11,
    name: 'submissions found by their lead',
    // A legacy bot may use the id of a lead one of its submissions joined (docs/legacy-api.md): the
    // ownership check asks whether the integration submitted to that lead.
    up: (db) =>
      db.exec('CREATE INDEX submissions_lead ON submissions (lead_id, integration_id) WHERE lead_id IS NOT NULL'),
  },
  {
    version: 12,
    name: 'named admin credentials',
    // The audit log names the operator from the credential, not from whatever a request body says.
    up: (db) =>
      db.exec(`
        CREATE TABLE admin_credentials (
          id         TEXT PRIMARY KEY,
          name       TEXT NOT NULL,
          prefix     TEXT NOT NULL,
          hash       TEXT NOT NULL UNIQUE,
          created_at TEXT NOT NULL,
          created_by TEXT NOT NULL,
          revoked_at TEXT
        );
        CREATE INDEX admin_credentials_name ON admin_credentials (name);
      `),
  },
  {
    version: 13,
    name: 'console users and sessions',
    // The console's sign-in per person (docs/console.md); PostgreSQL migration 6 makes the same tables.
    up: (db) =>
      db.exec(`
        CREATE TABLE console_users (
          id             TEXT PRIMARY KEY,
          name           TEXT NOT NULL UNIQUE,
          password_hash  TEXT NOT NULL,
          workspace_slug TEXT,
          created_at     TEXT NOT NULL,
          created_by     TEXT NOT NULL,
          disabled_at    TEXT
        );
        CREATE TABLE console_sessions (
          id_hash      TEXT PRIMARY KEY,
          user_name    TEXT NOT NULL,
          credential_id TEXT,
          created_at   TEXT NOT NULL,
          last_seen_at TEXT NOT NULL
        );
        CREATE INDEX console_sessions_user ON console_sessions (user_name);
        CREATE INDEX console_sessions_last_seen ON console_sessions (last_seen_at);
        CREATE INDEX console_sessions_created ON console_sessions (created_at);
      `),
  },
  {
    version: 14,
    name: 'when each key was last used',
    // Written with the usage counts (src/migration/usage.ts); PostgreSQL migration 7 makes the same table.
    up: (db) => db.exec('CREATE TABLE key_usage (key_id TEXT PRIMARY KEY, last_used_at TEXT NOT NULL) WITHOUT ROWID'),
  },
  {
    version: 15,
    name: 'no indexes of leads by status and group',
    // No query looks leads up by status or group since their counts are kept in lead_counts (migration
    // 6): the two indexes were written by every lead insert, move and deletion and read by nothing.
    // PostgreSQL migration 8 drops the same two.
    up: (db) => db.exec('DROP INDEX IF EXISTS leads_status; DROP INDEX IF EXISTS leads_group;'),
  },
  {
    version: 16,
    name: 'kept unmapped and invalid answers counted per key, and the indexes retention reads',
    // What applyAnswers checks its caps against (src/answers/keep.ts) in one read, rather than counting
    // the answer log per request; filled here from the answers already stored. The indexes let the
    // retention job (src/retention/) find the oldest rows without reading the tables. PostgreSQL
    // migration "answer caps and retention" makes the same.
    up: (db) =>
      db.exec(`
        CREATE TABLE answers_kept (
          integration_id TEXT NOT NULL,
          answer_key     TEXT NOT NULL,
          answers        INTEGER NOT NULL,
          bytes          INTEGER NOT NULL,
          PRIMARY KEY (integration_id, answer_key)
        ) WITHOUT ROWID;
        CREATE TABLE answers_not_kept (
          integration_id TEXT PRIMARY KEY,
          answers        INTEGER NOT NULL,
          last_at        TEXT NOT NULL
        ) WITHOUT ROWID;
        INSERT INTO answers_kept (integration_id, answer_key, answers, bytes)
          SELECT integration_id, answer_key, count(*), sum(length(CAST(answer_key AS BLOB)) + length(CAST(raw_value AS BLOB)))
          FROM answers WHERE outcome IN ('unmapped', 'invalid') GROUP BY integration_id, answer_key;
        CREATE INDEX answers_kept_age ON answers (created_at) WHERE outcome IN ('unmapped', 'invalid');
        CREATE INDEX api_usage_hour ON api_usage (hour);
      `),
  },
  {
    version: 17,
    name: 'a one-time value for the next page of a console session',
    // The v1 key an action issued, sealed under CONSOLE_SECRET and the session id (src/console/flash.ts),
    // kept until the page the action redirects to shows it. PostgreSQL migration "a one-time value for
    // the next page of a console session" adds the same column.
    up: (db) => db.exec('ALTER TABLE console_sessions ADD COLUMN flash TEXT'),
  },
  {
    version: 18,
    name: 'the ported flag of an integration, and the answers 404s counted per person',
    // Self-contained: two new tables, nothing else touched. The flag sits beside integration_states,
    // not in it: it is no state, and a state change never rewrites it. The 404s are written with the
    // usage counts (src/migration/usage.ts) and bounded per integration; the index lets retention find
    // the oldest. PostgreSQL migration 13, "the ported flag and the answers 404s" makes the same.
    up: (db) =>
      db.exec(`
        CREATE TABLE integration_ported (
          integration_id TEXT PRIMARY KEY,
          ported_at      TEXT NOT NULL,
          ported_by      TEXT NOT NULL,
          ported_note    TEXT
        ) WITHOUT ROWID;
        CREATE TABLE answers_not_found (
          integration_id      TEXT NOT NULL,
          external_contact_id TEXT NOT NULL,
          calls               INTEGER NOT NULL,
          first_at            TEXT NOT NULL,
          last_at             TEXT NOT NULL,
          PRIMARY KEY (integration_id, external_contact_id)
        );
        CREATE INDEX answers_not_found_age ON answers_not_found (last_at);
        CREATE INDEX answers_not_found_latest ON answers_not_found (integration_id, last_at, external_contact_id);
      `),
  },
  {
    version: 19,
    name: 'test keys and their calls counted apart',
    // v1's test keys (docs/api.md, "Test mode") are a kind of key, and their calls an interface of
    // their own in the usage counts. SQLite cannot change a CHECK in place: both tables are rebuilt,
    // rows, indexes and all (no other table references them, and no trigger reads them). PostgreSQL
    // migration 14, "test keys and their calls counted apart" makes the same.
    up: (db) =>
      db.exec(`
        CREATE TABLE api_keys_next (
          id             TEXT PRIMARY KEY,
          integration_id TEXT NOT NULL,
          kind           TEXT NOT NULL CHECK (kind IN ('v1', 'legacy', 'test')),
          prefix         TEXT NOT NULL,
          hash           TEXT NOT NULL UNIQUE,
          created_at     TEXT NOT NULL,
          created_by     TEXT NOT NULL,
          revoked_at     TEXT
        );
        INSERT INTO api_keys_next (id, integration_id, kind, prefix, hash, created_at, created_by, revoked_at)
          SELECT id, integration_id, kind, prefix, hash, created_at, created_by, revoked_at FROM api_keys;
        DROP TABLE api_keys;
        ALTER TABLE api_keys_next RENAME TO api_keys;
        CREATE INDEX api_keys_integration ON api_keys (integration_id);

        CREATE TABLE api_usage_next (
          integration_id TEXT NOT NULL,
          interface      TEXT NOT NULL CHECK (interface IN ('v1', 'legacy', 'v1-test')),
          route          TEXT NOT NULL,
          hour           TEXT NOT NULL,
          calls          INTEGER NOT NULL,
          last_seen      TEXT NOT NULL,
          ok_calls       INTEGER NOT NULL DEFAULT 0,
          last_ok        TEXT,
          PRIMARY KEY (integration_id, interface, route, hour)
        ) WITHOUT ROWID;
        INSERT INTO api_usage_next (integration_id, interface, route, hour, calls, last_seen, ok_calls, last_ok)
          SELECT integration_id, interface, route, hour, calls, last_seen, ok_calls, last_ok FROM api_usage;
        DROP TABLE api_usage;
        ALTER TABLE api_usage_next RENAME TO api_usage;
        CREATE INDEX api_usage_hour ON api_usage (hour);
      `),
  },
  {
    version: 20,
    name: 'one redacted legacy call per integration and route, for the porting guide',
    // Written with the usage counters' flush (src/migration/usage.ts), the newest kept; the sample is
    // redacted before it is held in memory (src/porting/redact.ts). Retention deletes those older than
    // RETENTION_USAGE_DAYS by the index on `at`. PostgreSQL migration 15 makes the same.
    up: (db) =>
      db.exec(`
        CREATE TABLE legacy_samples (
          integration_id TEXT NOT NULL,
          route          TEXT NOT NULL,
          at             TEXT NOT NULL,
          sample         TEXT NOT NULL,
          PRIMARY KEY (integration_id, route)
        ) WITHOUT ROWID;
        CREATE INDEX legacy_samples_age ON legacy_samples (at);
      `),
  },
  {
    version: 21,
    name: 'live persons found by test calls',
    // One row per test key and person a test call found (docs/api.md, "Test mode"), written after the
    // call's rolled-back unit; capped per test key (src/migration/test-matches.ts) and deleted by
    // retention once its last call is older than RETENTION_USAGE_DAYS. PostgreSQL migration 19 makes the same.
    up: (db) =>
      db.exec(`
        CREATE TABLE test_matches (
          integration_id TEXT NOT NULL,
          key_id         TEXT NOT NULL,
          contact_id     TEXT NOT NULL,
          lead_id        TEXT,
          endpoint       TEXT NOT NULL CHECK (endpoint IN ('leads', 'answers')),
          event_id       TEXT NOT NULL,
          matched_by     TEXT NOT NULL,
          own            INTEGER NOT NULL,
          calls          INTEGER NOT NULL,
          first_at       TEXT NOT NULL,
          last_at        TEXT NOT NULL,
          PRIMARY KEY (integration_id, key_id, contact_id)
        ) WITHOUT ROWID;
        CREATE INDEX test_matches_age ON test_matches (last_at);
        CREATE INDEX test_matches_newest ON test_matches (integration_id, first_at, key_id, contact_id);
      `),
  },
  {
    version: 22,
    name: 'keys the console issued and no page has shown yet',
    // Written in the unit that issues the key, deleted in the unit of the page that shows it; a key
    // whose session ended first is revoked by retention, audited as never shown (src/console/flash.ts).
    // No reference to console_sessions: the note outlives its session on purpose. PostgreSQL
    // migration 20 makes the same.
    up: (db) =>
      db.exec(`
        CREATE TABLE console_unshown_keys (
          key_id         TEXT PRIMARY KEY,
          integration_id TEXT NOT NULL,
          prefix         TEXT NOT NULL,
          id_hash        TEXT NOT NULL,
          issued_at      TEXT NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX console_unshown_keys_session ON console_unshown_keys (id_hash);
      `),
  },
  {
    version: 23,
    name: 'ignored legacy names by age, for their retention',
    // Retention deletes the names not sent for RETENTION_USAGE_DAYS, the oldest first: by this index, not
    // a scan of every integration's names. PostgreSQL migration 21 makes the same.
    up: (db) => db.exec('CREATE INDEX ignored_fields_age ON ignored_fields (last_seen)'),
  },
  {
    version: 24,
    name: 'unlinked legacy leads marked, kept so by triggers',
    // Whether a legacy lead's person has a binding of its integration is a join; the report, the 404
    // page and the link run read the unlinked ones by this mark and its index instead, so what they read
    // is bounded by what they name, not by the integration's legacy leads (most of them linked). The
    // triggers keep the mark true whichever unit makes or removes a binding. PostgreSQL migration 22
    // makes the same.
    up: (db) =>
      db.exec(`
        ALTER TABLE leads ADD COLUMN unlinked_legacy INTEGER NOT NULL DEFAULT 0;
        UPDATE leads SET unlinked_legacy = 1 WHERE origin = 'legacy' AND integration_id IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM contact_bindings b WHERE b.integration_id = leads.integration_id AND b.contact_id = leads.contact_id);
        CREATE INDEX leads_unlinked_legacy ON leads (integration_id, created_at, id) WHERE unlinked_legacy = 1 AND deleted_at IS NULL;
        CREATE TRIGGER unlinked_legacy_lead AFTER INSERT ON leads WHEN NEW.origin = 'legacy' AND NEW.integration_id IS NOT NULL BEGIN
          UPDATE leads SET unlinked_legacy = 1 WHERE id = NEW.id
            AND NOT EXISTS (SELECT 1 FROM contact_bindings b WHERE b.integration_id = NEW.integration_id AND b.contact_id = NEW.contact_id);
        END;
        CREATE TRIGGER unlinked_legacy_bound AFTER INSERT ON contact_bindings BEGIN
          UPDATE leads SET unlinked_legacy = 0 WHERE contact_id = NEW.contact_id AND deleted_at IS NULL AND integration_id = NEW.integration_id AND unlinked_legacy = 1;
        END;
        CREATE TRIGGER unlinked_legacy_unbound AFTER DELETE ON contact_bindings BEGIN
          UPDATE leads SET unlinked_legacy = 1 WHERE contact_id = OLD.contact_id AND deleted_at IS NULL AND integration_id = OLD.integration_id AND origin = 'legacy'
            AND NOT EXISTS (SELECT 1 FROM contact_bindings b WHERE b.integration_id = OLD.integration_id AND b.contact_id = OLD.contact_id);
        END;
      `),
  },
  {
    version: 25,
    name: 'legacy calls refused in a brownout window, per window and route',
    // Written by the usage recorder's flush, read by the migration report; retention deletes a window's
    // rows once it started more than RETENTION_USAGE_DAYS ago. PostgreSQL migration 24 makes the same.
    up: (db) =>
      db.exec(`
        CREATE TABLE brownout_refusals (
          integration_id TEXT NOT NULL,
          window_start   TEXT NOT NULL,
          route          TEXT NOT NULL,
          calls          INTEGER NOT NULL,
          last_at        TEXT NOT NULL,
          PRIMARY KEY (integration_id, window_start, route)
        ) WITHOUT ROWID;
        CREATE INDEX brownout_refusals_age ON brownout_refusals (window_start);
      `),
  },
  {
    version: 26,
    name: 'scheduled switch-offs',
    // One row per integration, read by the schedule runner through the due index (pending rows only).
    // PostgreSQL migration 25 makes the same.
    up: (db) =>
      db.exec(`
        CREATE TABLE switch_off_schedules (
          integration_id TEXT NOT NULL PRIMARY KEY,
          at              TEXT NOT NULL,
          force           INTEGER NOT NULL,
          retry_minutes   INTEGER NOT NULL,
          deadline        TEXT NOT NULL,
          status          TEXT NOT NULL CHECK (status IN ('pending', 'done', 'refused', 'cancelled')),
          attempts        INTEGER NOT NULL,
          next_attempt_at TEXT NOT NULL,
          last_attempt_at TEXT,
          last_refusal    TEXT,
          created_by      TEXT NOT NULL,
          created_at      TEXT NOT NULL,
          reason          TEXT
        ) WITHOUT ROWID;
        CREATE INDEX switch_off_schedules_due ON switch_off_schedules (next_attempt_at) WHERE status = 'pending';
      `),
  },
  {
    version: 27,
    name: 'moments of the migration calendar told',
    // A brownout window's start and end, each told once by whichever process records it first;
    // retention deletes them after RETENTION_USAGE_DAYS. PostgreSQL migration 26 makes the same.
    up: (db) =>
      db.exec(`
        CREATE TABLE calendar_moments (
          integration_id TEXT NOT NULL,
          kind           TEXT NOT NULL,
          at             TEXT NOT NULL,
          recorded_at    TEXT NOT NULL,
          PRIMARY KEY (integration_id, kind, at)
        ) WITHOUT ROWID;
        CREATE INDEX calendar_moments_age ON calendar_moments (at);
      `),
  },
  {
    version: 28,
    name: 'brownout windows set through the admin API',
    // Read by the legacy gate as a remembered read (src/store/hot-reads.ts): a commit of another
    // process moves data_version, which forgets it. Retention deletes a window once it ended
    // RETENTION_USAGE_DAYS ago. PostgreSQL migration 27 makes the same.
    up: (db) =>
      db.exec(`
        CREATE TABLE brownout_windows (
          id             TEXT NOT NULL PRIMARY KEY,
          integration_id TEXT NOT NULL,
          start_at       TEXT NOT NULL,
          minutes        INTEGER NOT NULL CHECK (minutes > 0),
          end_at         TEXT NOT NULL,
          created_by     TEXT NOT NULL,
          created_at     TEXT NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX brownout_windows_integration ON brownout_windows (integration_id, start_at);
        CREATE INDEX brownout_windows_start ON brownout_windows (start_at);
        CREATE INDEX brownout_windows_end ON brownout_windows (end_at);
      `),
  },
  {
    version: 29,
    name: 'webhook endpoints and their outbox',
    // Outgoing events (docs/webhooks.md): the endpoints the service team subscribed, the events written
    // in the unit of the change that caused them, one delivery per event and endpoint, and each
    // attempt's outcome. A delivery is claimed by one statement through webhook_deliveries_due: a claim
    // moves next_attempt_at to the end of its lease, so a claim whose replica died comes due again.
    // Payloads are text: the bytes signed are the bytes resent. PostgreSQL migration 28 makes the same.
    up: (db) =>
      db.exec(`
        CREATE TABLE webhook_endpoints (
          id                   TEXT NOT NULL PRIMARY KEY,
          url                  TEXT NOT NULL,
          event_types          TEXT NOT NULL,
          workspace_id         TEXT,
          description          TEXT,
          secret               TEXT NOT NULL,
          previous_secret      TEXT,
          previous_secret_until TEXT,
          paused               INTEGER NOT NULL DEFAULT 0,
          disabled_at          TEXT,
          disabled_reason      TEXT,
          dropped_deliveries   INTEGER NOT NULL DEFAULT 0,
          created_by           TEXT NOT NULL,
          created_at           TEXT NOT NULL,
          updated_at           TEXT NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX webhook_endpoints_workspace ON webhook_endpoints (workspace_id);
        CREATE TABLE webhook_events (
          id           TEXT NOT NULL PRIMARY KEY,
          type         TEXT NOT NULL,
          workspace_id TEXT,
          payload      TEXT NOT NULL,
          created_at   TEXT NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX webhook_events_age ON webhook_events (created_at);
        CREATE TABLE webhook_deliveries (
          id              TEXT NOT NULL PRIMARY KEY,
          event_id        TEXT NOT NULL REFERENCES webhook_events (id),
          endpoint_id     TEXT NOT NULL REFERENCES webhook_endpoints (id),
          status          TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed', 'dropped')),
          attempts        INTEGER NOT NULL DEFAULT 0,
          next_attempt_at TEXT NOT NULL,
          last_status     INTEGER,
          last_error      TEXT,
          claimed_by      TEXT,
          claimed_until   TEXT,
          created_at      TEXT NOT NULL,
          updated_at      TEXT NOT NULL,
          UNIQUE (event_id, endpoint_id)
        ) WITHOUT ROWID;
        CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at);
        CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, status, created_at);
        CREATE TABLE webhook_attempts (
          id            TEXT NOT NULL PRIMARY KEY,
          delivery_id   TEXT NOT NULL REFERENCES webhook_deliveries (id),
          at            TEXT NOT NULL,
          status_code   INTEGER,
          duration_ms   INTEGER NOT NULL,
          response_head TEXT,
          error         TEXT
        ) WITHOUT ROWID;
        CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, at);
        CREATE INDEX webhook_attempts_age ON webhook_attempts (at);
      `),
  },
];

export class MigrationError extends Error {
  constructor(migration: Migration, cause: unknown) {
    super(`migration ${migration.version} (${migration.name}) failed: ${(cause as Error).message}`, { cause });
    this.name = 'MigrationError';
  }
}

/** Applies every migration above the database's user_version, in order; returns the versions applied. */
export function migrate(db: Db, list: Migration[] = migrations): number[] {
  const known = Math.max(...list.map((m) => m.version));
  const found = db.pragma('user_version', { simple: true }) as number;
  // A gateway rolled back to an older release must not write into a schema it does not know.
  if (found > known)
    throw new Error(
      `the database schema is at version ${found}, newer than this gateway's ${known}: run a gateway release that knows it`,
    );
  const applied: number[] = [];
  for (const migration of [...list].sort((a, b) => a.version - b.version)) {
    const current = db.pragma('user_version', { simple: true }) as number;
    if (migration.version <= current) continue;
    try {
      db.transaction(() => {
        migration.up(db);
        db.pragma(`user_version = ${migration.version}`);
      }).immediate();
    } catch (error) {
      throw new MigrationError(migration, error);
    }
    applied.push(migration.version);
  }
  return applied;
}
