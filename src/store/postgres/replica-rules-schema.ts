// Migration 5 of the PostgreSQL engine: what each process says about itself in `replicas` (host, pid,
// start, the rules it runs, its last failed reload, the newest reload request it answered), and the
// counter of reload requests. A request is notified on a channel of its own, heard by every process's
// change-feed connection (change-feed.ts); each reloads its own rules folder and records the outcome.
// Columns are nullable: a process of an earlier release still registers with the three it knows.
export const RULES_RELOAD_CHANNEL = 'lead_gateway_rules_reload';

export const replicaRulesSchema = `
ALTER TABLE replicas
  ADD COLUMN host               text,
  ADD COLUMN pid                integer,
  ADD COLUMN started_at         timestamptz,
  ADD COLUMN rules_version      text,
  ADD COLUMN rules_loaded_at    timestamptz,
  ADD COLUMN rules_reload_error jsonb,
  ADD COLUMN reload_answered    bigint NOT NULL DEFAULT 0;

CREATE TABLE rules_reloads (
  id      integer PRIMARY KEY CHECK (id = 1),
  request bigint NOT NULL
);
INSERT INTO rules_reloads (id, request) VALUES (1, 0);
`;
