// Migration 2 of the PostgreSQL engine: the change feed. Every statement that changes a key or a
// migration state bumps one version number and notifies it (delivered to listeners at COMMIT), by
// trigger, so no unit of work can forget to; each gateway process records, in `replicas`, the newest
// version whose change it has applied to its remembered reads (src/store/postgres/change-feed.ts).
export const CHANGE_FEED_CHANNEL = 'lead_gateway_changes';

export const changeFeedSchema = `
CREATE TABLE change_feed (
  id      integer PRIMARY KEY CHECK (id = 1),
  version bigint NOT NULL
);
INSERT INTO change_feed (id, version) VALUES (1, 0);

CREATE TABLE replicas (
  id           text COLLATE "C" PRIMARY KEY,
  seen_version bigint NOT NULL,
  heartbeat_at timestamptz NOT NULL
);

CREATE FUNCTION announce_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  next bigint;
BEGIN
  UPDATE change_feed SET version = version + 1 WHERE id = 1 RETURNING version INTO next;
  PERFORM pg_notify('${CHANGE_FEED_CHANNEL}', next::text);
  RETURN NULL;
END
$$;

CREATE TRIGGER api_keys_changed AFTER INSERT OR UPDATE OR DELETE ON api_keys
  FOR EACH STATEMENT EXECUTE FUNCTION announce_change();
CREATE TRIGGER integration_states_changed AFTER INSERT OR UPDATE OR DELETE ON integration_states
  FOR EACH STATEMENT EXECUTE FUNCTION announce_change();
`;
