// Migration 1 of the PostgreSQL engine: the tables, uniqueness and indexes of the SQLite schema after
// its migration 12, written for PostgreSQL. Differences of form only: booleans are boolean, JSON is
// jsonb, a payment's amount is numeric (summed exactly), the trigger-kept counts use one trigger
// function, and orders SQLite broke by rowid break by the time-ordered id (src/store/ids.ts). Text
// compares byte by byte (COLLATE "C"), as in SQLite: ISO times, ids and names order the same whatever
// the database's locale.
export const schema = `
CREATE TABLE api_keys (
  id             text COLLATE "C" PRIMARY KEY,
  integration_id text COLLATE "C" NOT NULL,
  kind           text COLLATE "C" NOT NULL CHECK (kind IN ('v1', 'legacy')),
  prefix         text COLLATE "C" NOT NULL,
  hash           text COLLATE "C" NOT NULL UNIQUE,
  created_at     text COLLATE "C" NOT NULL,
  created_by     text COLLATE "C" NOT NULL,
  revoked_at     text COLLATE "C"
);
CREATE INDEX api_keys_integration ON api_keys (integration_id);

CREATE TABLE contacts (
  id           text COLLATE "C" PRIMARY KEY,
  workspace_id text COLLATE "C" NOT NULL,
  first_name   text COLLATE "C" NOT NULL,
  last_name    text COLLATE "C",
  phone        text COLLATE "C",
  email        text COLLATE "C",
  email_norm   text COLLATE "C",
  created_at   text COLLATE "C" NOT NULL,
  updated_at   text COLLATE "C" NOT NULL
);
CREATE INDEX contacts_phone ON contacts (workspace_id, phone) WHERE phone IS NOT NULL;
CREATE INDEX contacts_email ON contacts (workspace_id, email_norm) WHERE email_norm IS NOT NULL;

CREATE TABLE contact_bindings (
  integration_id      text COLLATE "C" NOT NULL,
  external_contact_id text COLLATE "C" NOT NULL,
  contact_id          text COLLATE "C" NOT NULL REFERENCES contacts (id),
  created_at          text COLLATE "C" NOT NULL,
  PRIMARY KEY (integration_id, external_contact_id)
);
CREATE INDEX contact_bindings_contact ON contact_bindings (contact_id);

CREATE TABLE leads (
  id             text COLLATE "C" PRIMARY KEY,
  workspace_id   text COLLATE "C" NOT NULL,
  contact_id     text COLLATE "C" NOT NULL REFERENCES contacts (id),
  integration_id text COLLATE "C",
  origin         text COLLATE "C" NOT NULL DEFAULT 'v1' CHECK (origin IN ('v1', 'legacy')),
  first_name     text COLLATE "C" NOT NULL,
  last_name      text COLLATE "C",
  phone          text COLLATE "C",
  email          text COLLATE "C",
  notes          text COLLATE "C",
  source         text COLLATE "C",
  invited_by     text COLLATE "C",
  stage_id       text COLLATE "C",
  status_id      text COLLATE "C",
  group_id       text COLLATE "C",
  assigned_to    text COLLATE "C",
  created_by     text COLLATE "C",
  closed_by      text COLLATE "C",
  closed_at      text COLLATE "C",
  close_outcome  text COLLATE "C",
  close_reason   text COLLATE "C",
  extra_data     jsonb,
  created_at     text COLLATE "C" NOT NULL,
  updated_at     text COLLATE "C" NOT NULL,
  deleted_at     text COLLATE "C"
);
CREATE INDEX leads_contact ON leads (contact_id, created_at) WHERE deleted_at IS NULL;
CREATE INDEX leads_status ON leads (status_id) WHERE deleted_at IS NULL;
CREATE INDEX leads_group ON leads (group_id) WHERE deleted_at IS NULL;
CREATE INDEX leads_legacy ON leads (integration_id) WHERE origin = 'legacy';
CREATE INDEX leads_integration_page ON leads (integration_id, created_at, id) WHERE deleted_at IS NULL;

CREATE TABLE lead_tags (
  lead_id text COLLATE "C" NOT NULL REFERENCES leads (id),
  tag_id  text COLLATE "C" NOT NULL,
  PRIMARY KEY (lead_id, tag_id)
);

CREATE TABLE lead_comments (
  id          text COLLATE "C" PRIMARY KEY,
  lead_id     text COLLATE "C" NOT NULL REFERENCES leads (id),
  body        text COLLATE "C" NOT NULL,
  author_kind text COLLATE "C" NOT NULL,
  author_ref  text COLLATE "C",
  created_at  text COLLATE "C" NOT NULL
);
CREATE INDEX lead_comments_lead ON lead_comments (lead_id);

CREATE TABLE submissions (
  id             text COLLATE "C" PRIMARY KEY,
  integration_id text COLLATE "C" NOT NULL,
  endpoint       text COLLATE "C" NOT NULL,
  event_id       text COLLATE "C" NOT NULL,
  fingerprint    text COLLATE "C" NOT NULL,
  body           jsonb NOT NULL,
  contact_id     text COLLATE "C",
  lead_id        text COLLATE "C",
  outcome        jsonb NOT NULL,
  needs_review   boolean NOT NULL DEFAULT false,
  review_reason  text COLLATE "C",
  created_at     text COLLATE "C" NOT NULL,
  UNIQUE (integration_id, endpoint, event_id)
);
CREATE INDEX submissions_review ON submissions (integration_id, created_at) WHERE needs_review;
CREATE INDEX submissions_lead ON submissions (lead_id, integration_id) WHERE lead_id IS NOT NULL;

CREATE TABLE custom_field_values (
  id               text COLLATE "C" PRIMARY KEY,
  lead_id          text COLLATE "C" NOT NULL REFERENCES leads (id),
  field_id         text COLLATE "C" NOT NULL,
  text_value       text COLLATE "C",
  decimal_value    text COLLATE "C",
  boolean_value    boolean,
  date_value       text COLLATE "C",
  datetime_value   text COLLATE "C",
  option_id        text COLLATE "C",
  selected_options jsonb,
  written_by_kind  text COLLATE "C" NOT NULL CHECK (written_by_kind IN ('employee', 'import', 'automation', 'integration')),
  written_by_ref   text COLLATE "C",
  updated_at       text COLLATE "C" NOT NULL,
  UNIQUE (lead_id, field_id)
);

CREATE TABLE answers (
  id              text COLLATE "C" PRIMARY KEY,
  submission_id   text COLLATE "C" NOT NULL,
  integration_id  text COLLATE "C" NOT NULL,
  lead_id         text COLLATE "C" NOT NULL REFERENCES leads (id),
  answer_key      text COLLATE "C" NOT NULL,
  raw_value       jsonb NOT NULL,
  outcome         text COLLATE "C" NOT NULL CHECK (outcome IN ('written', 'unchanged', 'kept_existing', 'unmapped', 'invalid')),
  error           text COLLATE "C",
  field_id        text COLLATE "C",
  created_at      text COLLATE "C" NOT NULL,
  applied_at      text COLLATE "C",
  applied_outcome text COLLATE "C"
);
CREATE INDEX answers_submission ON answers (submission_id);
CREATE INDEX answers_unmapped ON answers (integration_id, created_at) WHERE outcome = 'unmapped' AND applied_at IS NULL;

CREATE TABLE integration_states (
  integration_id text COLLATE "C" PRIMARY KEY,
  state          text COLLATE "C" NOT NULL CHECK (state IN ('legacy', 'migrating', 'switched_off')),
  updated_at     text COLLATE "C" NOT NULL
);

CREATE TABLE audit_log (
  id             text COLLATE "C" PRIMARY KEY,
  integration_id text COLLATE "C" NOT NULL,
  action         text COLLATE "C" NOT NULL,
  from_state     text COLLATE "C",
  to_state       text COLLATE "C",
  actor          text COLLATE "C" NOT NULL,
  reason         text COLLATE "C",
  details        jsonb,
  at             text COLLATE "C" NOT NULL
);
CREATE INDEX audit_log_integration ON audit_log (integration_id, at);

-- Calls per integration, interface and route, counted per hour.
CREATE TABLE api_usage (
  integration_id text COLLATE "C" NOT NULL,
  interface      text COLLATE "C" NOT NULL CHECK (interface IN ('v1', 'legacy')),
  route          text COLLATE "C" NOT NULL,
  hour           text COLLATE "C" NOT NULL,
  calls          bigint NOT NULL,
  last_seen      text COLLATE "C" NOT NULL,
  ok_calls       bigint NOT NULL DEFAULT 0,
  last_ok        text COLLATE "C",
  PRIMARY KEY (integration_id, interface, route, hour)
);

-- Legacy request members the gateway ignores (stage, tags, ...), counted.
CREATE TABLE ignored_fields (
  integration_id text COLLATE "C" NOT NULL,
  field          text COLLATE "C" NOT NULL,
  calls          bigint NOT NULL,
  last_seen      text COLLATE "C" NOT NULL,
  PRIMARY KEY (integration_id, field)
);

CREATE TABLE legacy_tags (
  workspace_id text COLLATE "C" NOT NULL,
  id           text COLLATE "C" NOT NULL,
  name         text COLLATE "C" NOT NULL,
  color        text COLLATE "C",
  created_at   text COLLATE "C" NOT NULL,
  PRIMARY KEY (workspace_id, id)
);

CREATE TABLE lead_payments (
  id           text COLLATE "C" PRIMARY KEY,
  lead_id      text COLLATE "C" NOT NULL REFERENCES leads (id),
  amount_minor numeric NOT NULL CHECK (amount_minor = trunc(amount_minor)),
  note         text COLLATE "C",
  created_at   text COLLATE "C" NOT NULL
);
CREATE INDEX lead_payments_lead ON lead_payments (lead_id, created_at);

CREATE TABLE readiness_probe (id integer PRIMARY KEY CHECK (id = 1), checked_at text NOT NULL);

CREATE TABLE admin_credentials (
  id         text COLLATE "C" PRIMARY KEY,
  name       text COLLATE "C" NOT NULL,
  prefix     text COLLATE "C" NOT NULL,
  hash       text COLLATE "C" NOT NULL UNIQUE,
  created_at text COLLATE "C" NOT NULL,
  created_by text COLLATE "C" NOT NULL,
  revoked_at text COLLATE "C"
);
CREATE INDEX admin_credentials_name ON admin_credentials (name);

-- Every rendered lead carries leads_count of its status and group, and a legacy page the count of its
-- integration's leads: kept by a trigger for any writer, read as one row.
CREATE TABLE lead_counts (
  kind    text COLLATE "C" NOT NULL CHECK (kind IN ('status', 'group')),
  item_id text COLLATE "C" NOT NULL,
  n       bigint NOT NULL,
  PRIMARY KEY (kind, item_id)
);
CREATE TABLE integration_lead_counts (
  integration_id text COLLATE "C" PRIMARY KEY,
  n              bigint NOT NULL
);

CREATE FUNCTION keep_lead_counts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.deleted_at IS NULL THEN
    UPDATE lead_counts SET n = n - 1 WHERE kind = 'status' AND item_id = OLD.status_id;
    UPDATE lead_counts SET n = n - 1 WHERE kind = 'group' AND item_id = OLD.group_id;
    UPDATE integration_lead_counts SET n = n - 1 WHERE integration_id = OLD.integration_id;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.deleted_at IS NULL THEN
    IF NEW.status_id IS NOT NULL THEN
      INSERT INTO lead_counts (kind, item_id, n) VALUES ('status', NEW.status_id, 1)
        ON CONFLICT (kind, item_id) DO UPDATE SET n = lead_counts.n + 1;
    END IF;
    IF NEW.group_id IS NOT NULL THEN
      INSERT INTO lead_counts (kind, item_id, n) VALUES ('group', NEW.group_id, 1)
        ON CONFLICT (kind, item_id) DO UPDATE SET n = lead_counts.n + 1;
    END IF;
    IF NEW.integration_id IS NOT NULL THEN
      INSERT INTO integration_lead_counts (integration_id, n) VALUES (NEW.integration_id, 1)
        ON CONFLICT (integration_id) DO UPDATE SET n = integration_lead_counts.n + 1;
    END IF;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER lead_counts_insert_delete AFTER INSERT OR DELETE ON leads FOR EACH ROW EXECUTE FUNCTION keep_lead_counts();
CREATE TRIGGER lead_counts_update AFTER UPDATE OF status_id, group_id, integration_id, deleted_at ON leads
  FOR EACH ROW EXECUTE FUNCTION keep_lead_counts();
`;
