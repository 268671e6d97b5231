// Migration 1 of the PostgreSQL engine: the tables, uniqueness and indexes of the SQLite schema after
// its migration 12, written for PostgreSQL. Differences of form only: booleans are boolean, JSON is
// jsonb, a payment's amount is numeric (summed exactly), the trigger-kept counts use one trigger
// function, and orders SQLite broke by rowid break by the time-ordered id (src/store/ids.ts).
export const schema = `
CREATE TABLE api_keys (
  id             text PRIMARY KEY,
  integration_id text NOT NULL,
  kind           text NOT NULL CHECK (kind IN ('v1', 'legacy')),
  prefix         text NOT NULL,
  hash           text NOT NULL UNIQUE,
  created_at     text NOT NULL,
  created_by     text NOT NULL,
  revoked_at     text
);
CREATE INDEX api_keys_integration ON api_keys (integration_id);

CREATE TABLE contacts (
  id           text PRIMARY KEY,
  workspace_id text NOT NULL,
  first_name   text NOT NULL,
  last_name    text,
  phone        text,
  email        text,
  email_norm   text,
  created_at   text NOT NULL,
  updated_at   text NOT NULL
);
CREATE INDEX contacts_phone ON contacts (workspace_id, phone) WHERE phone IS NOT NULL;
CREATE INDEX contacts_email ON contacts (workspace_id, email_norm) WHERE email_norm IS NOT NULL;

CREATE TABLE contact_bindings (
  integration_id      text NOT NULL,
  external_contact_id text NOT NULL,
  contact_id          text NOT NULL REFERENCES contacts (id),
  created_at          text NOT NULL,
  PRIMARY KEY (integration_id, external_contact_id)
);
CREATE INDEX contact_bindings_contact ON contact_bindings (contact_id);

CREATE TABLE leads (
  id             text PRIMARY KEY,
  workspace_id   text NOT NULL,
  contact_id     text NOT NULL REFERENCES contacts (id),
  integration_id text,
  origin         text NOT NULL DEFAULT 'v1' CHECK (origin IN ('v1', 'legacy')),
  first_name     text NOT NULL,
  last_name      text,
  phone          text,
  email          text,
  notes          text,
  source         text,
  invited_by     text,
  stage_id       text,
  status_id      text,
  group_id       text,
  assigned_to    text,
  created_by     text,
  closed_by      text,
  closed_at      text,
  close_outcome  text,
  close_reason   text,
  extra_data     jsonb,
  created_at     text NOT NULL,
  updated_at     text NOT NULL,
  deleted_at     text
);
CREATE INDEX leads_contact ON leads (contact_id, created_at) WHERE deleted_at IS NULL;
CREATE INDEX leads_status ON leads (status_id) WHERE deleted_at IS NULL;
CREATE INDEX leads_group ON leads (group_id) WHERE deleted_at IS NULL;
CREATE INDEX leads_legacy ON leads (integration_id) WHERE origin = 'legacy';
CREATE INDEX leads_integration_page ON leads (integration_id, created_at, id) WHERE deleted_at IS NULL;

CREATE TABLE lead_tags (
  lead_id text NOT NULL REFERENCES leads (id),
  tag_id  text NOT NULL,
  PRIMARY KEY (lead_id, tag_id)
);

CREATE TABLE lead_comments (
  id          text PRIMARY KEY,
  lead_id     text NOT NULL REFERENCES leads (id),
  body        text NOT NULL,
  author_kind text NOT NULL,
  author_ref  text,
  created_at  text NOT NULL
);
CREATE INDEX lead_comments_lead ON lead_comments (lead_id);

CREATE TABLE submissions (
  id             text PRIMARY KEY,
  integration_id text NOT NULL,
  endpoint       text NOT NULL,
  event_id       text NOT NULL,
  fingerprint    text NOT NULL,
  body           jsonb NOT NULL,
  contact_id     text,
  lead_id        text,
  outcome        jsonb NOT NULL,
  needs_review   boolean NOT NULL DEFAULT false,
  review_reason  text,
  created_at     text NOT NULL,
  UNIQUE (integration_id, endpoint, event_id)
);
CREATE INDEX submissions_review ON submissions (integration_id, created_at) WHERE needs_review;
CREATE INDEX submissions_lead ON submissions (lead_id, integration_id) WHERE lead_id IS NOT NULL;

CREATE TABLE custom_field_values (
  id               text PRIMARY KEY,
  lead_id          text NOT NULL REFERENCES leads (id),
  field_id         text NOT NULL,
  text_value       text,
  decimal_value    text,
  boolean_value    boolean,
  date_value       text,
  datetime_value   text,
  option_id        text,
  selected_options jsonb,
  written_by_kind  text NOT NULL CHECK (written_by_kind IN ('employee', 'import', 'automation', 'integration')),
  written_by_ref   text,
  updated_at       text NOT NULL,
  UNIQUE (lead_id, field_id)
);

CREATE TABLE answers (
  id              text PRIMARY KEY,
  submission_id   text NOT NULL,
  integration_id  text NOT NULL,
  lead_id         text NOT NULL REFERENCES leads (id),
  answer_key      text NOT NULL,
  raw_value       jsonb NOT NULL,
  outcome         text NOT NULL CHECK (outcome IN ('written', 'unchanged', 'kept_existing', 'unmapped', 'invalid')),
  error           text,
  field_id        text,
  created_at      text NOT NULL,
  applied_at      text,
  applied_outcome text
);
CREATE INDEX answers_submission ON answers (submission_id);
CREATE INDEX answers_unmapped ON answers (integration_id, created_at) WHERE outcome = 'unmapped' AND applied_at IS NULL;

CREATE TABLE integration_states (
  integration_id text PRIMARY KEY,
  state          text NOT NULL CHECK (state IN ('legacy', 'migrating', 'switched_off')),
  updated_at     text NOT NULL
);

CREATE TABLE audit_log (
  id             text PRIMARY KEY,
  integration_id text NOT NULL,
  action         text NOT NULL,
  from_state     text,
  to_state       text,
  actor          text NOT NULL,
  reason         text,
  details        jsonb,
  at             text NOT NULL
);
CREATE INDEX audit_log_integration ON audit_log (integration_id, at);

-- Calls per integration, interface and route, counted per hour.
CREATE TABLE api_usage (
  integration_id text NOT NULL,
  interface      text NOT NULL CHECK (interface IN ('v1', 'legacy')),
  route          text NOT NULL,
  hour           text NOT NULL,
  calls          bigint NOT NULL,
  last_seen      text NOT NULL,
  ok_calls       bigint NOT NULL DEFAULT 0,
  last_ok        text,
  PRIMARY KEY (integration_id, interface, route, hour)
);

-- Legacy request members the gateway ignores (stage, tags, ...), counted.
CREATE TABLE ignored_fields (
  integration_id text NOT NULL,
  field          text NOT NULL,
  calls          bigint NOT NULL,
  last_seen      text NOT NULL,
  PRIMARY KEY (integration_id, field)
);

CREATE TABLE legacy_tags (
  workspace_id text NOT NULL,
  id           text NOT NULL,
  name         text NOT NULL,
  color        text,
  created_at   text NOT NULL,
  PRIMARY KEY (workspace_id, id)
);

CREATE TABLE lead_payments (
  id           text PRIMARY KEY,
  lead_id      text NOT NULL REFERENCES leads (id),
  amount_minor numeric NOT NULL CHECK (amount_minor = trunc(amount_minor)),
  note         text,
  created_at   text NOT NULL
);
CREATE INDEX lead_payments_lead ON lead_payments (lead_id, created_at);

CREATE TABLE readiness_probe (id integer PRIMARY KEY CHECK (id = 1), checked_at text NOT NULL);

CREATE TABLE admin_credentials (
  id         text PRIMARY KEY,
  name       text NOT NULL,
  prefix     text NOT NULL,
  hash       text NOT NULL UNIQUE,
  created_at text NOT NULL,
  created_by text NOT NULL,
  revoked_at text
);
CREATE INDEX admin_credentials_name ON admin_credentials (name);

-- Every rendered lead carries leads_count of its status and group, and a legacy page the count of its
-- integration's leads: kept by a trigger for any writer, read as one row.
CREATE TABLE lead_counts (
  kind    text NOT NULL CHECK (kind IN ('status', 'group')),
  item_id text NOT NULL,
  n       bigint NOT NULL,
  PRIMARY KEY (kind, item_id)
);
CREATE TABLE integration_lead_counts (
  integration_id text PRIMARY KEY,
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
