// The ported flag of an integration and the answers 404s counted per person: the tables and indexes of
// SQLite migration 18.
export const portingSchema = `
CREATE TABLE integration_ported (
  integration_id text COLLATE "C" PRIMARY KEY,
  ported_at      text COLLATE "C" NOT NULL,
  ported_by      text COLLATE "C" NOT NULL,
  ported_note    text COLLATE "C"
);
CREATE TABLE answers_not_found (
  integration_id      text COLLATE "C" NOT NULL,
  external_contact_id text COLLATE "C" NOT NULL,
  calls               bigint NOT NULL,
  first_at            text COLLATE "C" NOT NULL,
  last_at             text COLLATE "C" NOT NULL,
  PRIMARY KEY (integration_id, external_contact_id)
);
CREATE INDEX answers_not_found_age ON answers_not_found (last_at);
CREATE INDEX answers_not_found_latest ON answers_not_found (integration_id, last_at, external_contact_id);
`;
