// The console's users and sessions in PostgreSQL: the tables of SQLite migration 13.
export const consoleSchema = `
CREATE TABLE console_users (
  id             text COLLATE "C" PRIMARY KEY,
  name           text COLLATE "C" NOT NULL UNIQUE,
  password_hash  text COLLATE "C" NOT NULL,
  workspace_slug text COLLATE "C",
  created_at     text COLLATE "C" NOT NULL,
  created_by     text COLLATE "C" NOT NULL,
  disabled_at    text COLLATE "C"
);
CREATE TABLE console_sessions (
  id_hash      text COLLATE "C" PRIMARY KEY,
  user_name    text COLLATE "C" NOT NULL,
  credential_id text COLLATE "C",
  created_at   text COLLATE "C" NOT NULL,
  last_seen_at text COLLATE "C" NOT NULL
);
CREATE INDEX console_sessions_user ON console_sessions (user_name);
CREATE INDEX console_sessions_last_seen ON console_sessions (last_seen_at);
CREATE INDEX console_sessions_created ON console_sessions (created_at);
`;
