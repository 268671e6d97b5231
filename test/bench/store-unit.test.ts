// The bench's store-unit reference does what its figures say: each measured new lead a new person's
// new lead, each replay a replay that stores nothing, each answers unit a write to a measured lead's
// person; and it reports a CPU figure per phase. Its numbers are not checked (a test asserts no
// timing): the rows are. The warm-up, the measured leads and the replayed ones are three different
// counts here, so a unit numbered against the wrong one shows.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/child-gateway.js';
import { execOwned } from '../support/owned.js';

const run = execOwned;

interface Counts {
  units: number;
  warmup: number;
  replayed: number;
}

/** Runs the reference from its sources on `file`; its figures, checked to be those of `counts`. */
async function reference(
  file: string,
  { units, warmup, replayed }: Counts,
  ...extra: string[]
): Promise<Record<string, number>> {
  const { stdout } = await run(
    process.execPath,
    [
      '--import',
      'tsx',
      join(ROOT, 'bench', 'store-unit.ts'),
      file,
      '--units',
      String(units),
      '--warmup',
      String(warmup),
      '--replayed',
      String(replayed),
      '--source',
      ...extra,
    ],
    { cwd: ROOT },
  );
  const figures = JSON.parse(stdout) as Record<string, number>;
  expect(figures).toMatchObject({ units, concurrency: 20 });
  return figures;
}

/** The file's rows, read through `read` on a read-only connection. */
function rows(file: string, read: (db: Database.Database, count: (sql: string) => number) => void): void {
  const db = new Database(file, { readonly: true });
  try {
    read(db, (sql) => (db.prepare(sql).get() as { n: number }).n);
  } finally {
    db.close();
  }
}

const freshFile = () => join(mkdtempSync(join(tmpdir(), 'store-unit-')), 'unit.db');

describe('the bench store-unit reference', () => {
  it('stores a new person per new lead, nothing per replay, and the answers it reports', async () => {
    const file = freshFile();
    const [units, warmup, replayed] = [30, 10, 7];
    const figures = await reference(file, { units, warmup, replayed });
    for (const phase of ['new_lead_cpu_us', 'replay_cpu_us', 'answers_cpu_us'])
      expect(figures[phase]).toBeGreaterThan(0);

    rows(file, (db, count) => {
      // The warm-up's leads and the measured ones: a person and a lead each.
      expect(count('SELECT count(*) AS n FROM contacts')).toBe(warmup + units);
      expect(count('SELECT count(*) AS n FROM leads')).toBe(warmup + units);
      // A submission per new lead and per answers unit; the replays added none.
      expect(count("SELECT count(*) AS n FROM submissions WHERE endpoint = 'leads'")).toBe(warmup + units);
      expect(count("SELECT count(*) AS n FROM submissions WHERE endpoint = 'answers'")).toBe(units);
      // The answers went to the persons of the first `replayed` measured leads (numbered after the
      // warm-up's), in turn. (The replays check their own lead: the reference stops otherwise.)
      const answered = db
        .prepare(
          "SELECT b.external_contact_id AS id FROM submissions s JOIN contact_bindings b ON b.contact_id = s.contact_id WHERE s.endpoint = 'answers'",
        )
        .all() as { id: string }[];
      expect(answered.map((r) => r.id).sort()).toEqual(
        Array.from({ length: units }, (_, i) => `telegram:unit-${warmup + (i % replayed)}`).sort(),
      );
    });
  });

  it('measures new persons again on a file a first run filled, under --run and --from', async () => {
    const file = freshFile();
    const counts = { units: 12, warmup: 4, replayed: 3 };
    const { units, warmup, replayed } = counts;
    await reference(file, counts);
    // The second run's events and phones start past the first's: each of its leads must be a new
    // person's (the reference stops otherwise), so the file ends with both runs' persons.
    await reference(file, counts, '--run', 'again', '--from', String(warmup + units));

    rows(file, (db, count) => {
      expect(count('SELECT count(*) AS n FROM contacts')).toBe(2 * (warmup + units));
      expect(count('SELECT count(*) AS n FROM leads')).toBe(2 * (warmup + units));
      expect(count('SELECT count(DISTINCT phone) AS n FROM contacts')).toBe(2 * (warmup + units));
      expect(count("SELECT count(*) AS n FROM submissions WHERE endpoint = 'answers'")).toBe(2 * units);
      // The second run's answers went to its own measured persons, not to the first run's.
      const again = db
        .prepare(
          "SELECT DISTINCT b.external_contact_id AS id FROM submissions s JOIN contact_bindings b ON b.contact_id = s.contact_id WHERE s.endpoint = 'answers' AND s.event_id LIKE 'again-%'",
        )
        .all() as { id: string }[];
      expect(again.map((r) => r.id).sort()).toEqual(
        Array.from({ length: replayed }, (_, i) => `telegram:again-${warmup + units + warmup + i}`).sort(),
      );
    });
  });
});
