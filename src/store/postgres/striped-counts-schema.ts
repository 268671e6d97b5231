// Migration 3 of the PostgreSQL engine: the lead counts spread over stripes. Every new lead of a
// status added one to the same row, and the unit held that row's lock until its COMMIT (and its
// flush): new leads of one workspace committed one at a time, most connections waiting on that row
// (bench/results/LOG.md, "PostgreSQL beside SQLite"). A lead now counts in the stripe its id hashes
// to, one of LEAD_COUNT_STRIPES, for its whole life; a count is the sum of its stripes, at most that
// many rows of one index range.
export const LEAD_COUNT_STRIPES = 16;

export const stripedCountsSchema = `
ALTER TABLE lead_counts ADD COLUMN stripe smallint NOT NULL DEFAULT 0;
ALTER TABLE lead_counts DROP CONSTRAINT lead_counts_pkey, ADD PRIMARY KEY (kind, item_id, stripe);
ALTER TABLE integration_lead_counts ADD COLUMN stripe smallint NOT NULL DEFAULT 0;
ALTER TABLE integration_lead_counts DROP CONSTRAINT integration_lead_counts_pkey, ADD PRIMARY KEY (integration_id, stripe);

-- The counts so far, counted again into the stripes their leads hash to (the same transaction: no
-- lead is added meanwhile, the migration holds its lock).
DELETE FROM lead_counts;
DELETE FROM integration_lead_counts;
INSERT INTO lead_counts (kind, item_id, stripe, n)
  SELECT 'status', status_id, abs(hashtext(id) % ${LEAD_COUNT_STRIPES}), count(*) FROM leads
  WHERE deleted_at IS NULL AND status_id IS NOT NULL GROUP BY 2, 3;
INSERT INTO lead_counts (kind, item_id, stripe, n)
  SELECT 'group', group_id, abs(hashtext(id) % ${LEAD_COUNT_STRIPES}), count(*) FROM leads
  WHERE deleted_at IS NULL AND group_id IS NOT NULL GROUP BY 2, 3;
INSERT INTO integration_lead_counts (integration_id, stripe, n)
  SELECT integration_id, abs(hashtext(id) % ${LEAD_COUNT_STRIPES}), count(*) FROM leads
  WHERE deleted_at IS NULL AND integration_id IS NOT NULL GROUP BY 1, 2;

CREATE OR REPLACE FUNCTION keep_lead_counts() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  -- A lead's id never changes, so it adds to and takes from the same stripe all its life.
  s smallint := abs(hashtext(coalesce(NEW.id, OLD.id)) % ${LEAD_COUNT_STRIPES});
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.deleted_at IS NULL THEN
    UPDATE lead_counts SET n = n - 1 WHERE kind = 'status' AND item_id = OLD.status_id AND stripe = s;
    UPDATE lead_counts SET n = n - 1 WHERE kind = 'group' AND item_id = OLD.group_id AND stripe = s;
    UPDATE integration_lead_counts SET n = n - 1 WHERE integration_id = OLD.integration_id AND stripe = s;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.deleted_at IS NULL THEN
    IF NEW.status_id IS NOT NULL THEN
      INSERT INTO lead_counts (kind, item_id, stripe, n) VALUES ('status', NEW.status_id, s, 1)
        ON CONFLICT (kind, item_id, stripe) DO UPDATE SET n = lead_counts.n + 1;
    END IF;
    IF NEW.group_id IS NOT NULL THEN
      INSERT INTO lead_counts (kind, item_id, stripe, n) VALUES ('group', NEW.group_id, s, 1)
        ON CONFLICT (kind, item_id, stripe) DO UPDATE SET n = lead_counts.n + 1;
    END IF;
    IF NEW.integration_id IS NOT NULL THEN
      INSERT INTO integration_lead_counts (integration_id, stripe, n) VALUES (NEW.integration_id, s, 1)
        ON CONFLICT (integration_id, stripe) DO UPDATE SET n = integration_lead_counts.n + 1;
    END IF;
  END IF;
  RETURN NULL;
END $$;
`;
