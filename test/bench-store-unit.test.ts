// The bench's store-unit reference does what its figures say: each measured new lead a new person's
// new lead, each replay a replay that stores nothing, each answers unit a write to a measured lead's
// person; and it reports a CPU figure per phase. Its numbers are not checked (a test asserts no
// timing): the rows are. The warm-up, the measured leads and the replayed ones are three different
// counts here, so a unit numbered against the wrong one shows.
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { ROOT } from './support/child-gateway.js';

const run = promisify(execFile);

describe('the bench store-unit reference', () => {
  it('stores a new person per new lead, nothing per replay, and the answers it reports', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'store-unit-')), 'unit.db');
    const [units, warmup, replayed] = [30, 10, 7];
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', join(ROOT, 'bench', 'store-unit.ts'), file, '--units', String(units), '--warmup', String(warmup), '--replayed', String(replayed), '--source'],
      { cwd: ROOT },
    );
    const figures = JSON.parse(stdout) as Record<string, number>;
    expect(figures).toMatchObject({ units, concurrency: 20 });
    for (const phase of ['new_lead_cpu_us', 'replay_cpu_us', 'answers_cpu_us']) expect(figures[phase]).toBeGreaterThan(0);

    const db = new Database(file, { readonly: true });
    try {
      const count = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
      // The warm-up's leads and the measured ones: a person and a lead each.
      expect(count('SELECT count(*) AS n FROM contacts')).toBe(warmup + units);
      expect(count('SELECT count(*) AS n FROM leads')).toBe(warmup + units);
      // A submission per new lead and per answers unit; the replays added none.
      expect(count("SELECT count(*) AS n FROM submissions WHERE endpoint = 'leads'")).toBe(warmup + units);
      expect(count("SELECT count(*) AS n FROM submissions WHERE endpoint = 'answers'")).toBe(units);
      // The answers went to the persons of the first `replayed` measured leads (numbered after the
      // warm-up's), in turn. (The replays check their own lead: the reference stops otherwise.)
      const answered = db
        .prepare("SELECT b.external_contact_id AS id FROM submissions s JOIN contact_bindings b ON b.contact_id = s.contact_id WHERE s.endpoint = 'answers'")
        .all() as { id: string }[];
      expect(answered.map((r) => r.id).sort()).toEqual(Array.from({ length: units }, (_, i) => `telegram:unit-${warmup + (i % replayed)}`).sort());
    } finally {
      db.close();
    }
  });

  it('measures new persons again on a file a first run filled, under --run and --from', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'store-unit-')), 'unit.db');
    const [units, warmup, replayed] = [12, 4, 3];
    const reference = (...extra: string[]) =>
      run(process.execPath, ['--import', 'tsx', join(ROOT, 'bench', 'store-unit.ts'), file, '--units', String(units), '--warmup', String(warmup), '--replayed', String(replayed), '--source', ...extra], { cwd: ROOT });
    await reference();
    // The second run's events and phones start past the first's: each of its leads must be a new
    // person's (the reference stops otherwise), so the file ends with both runs' persons.
    const { stdout } = await reference('--run', 'again', '--from', String(warmup + units));
    expect(JSON.parse(stdout)).toMatchObject({ units, concurrency: 20 });

    const db = new Database(file, { readonly: true });
    try {
      const count = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
      expect(count('SELECT count(*) AS n FROM contacts')).toBe(2 * (warmup + units));
      expect(count('SELECT count(*) AS n FROM leads')).toBe(2 * (warmup + units));
      expect(count('SELECT count(DISTINCT phone) AS n FROM contacts')).toBe(2 * (warmup + units));
      expect(count("SELECT count(*) AS n FROM submissions WHERE endpoint = 'answers'")).toBe(2 * units);
      // The second run's answers went to its own measured persons, not to the first run's.
      const again = db
        .prepare("SELECT DISTINCT b.external_contact_id AS id FROM submissions s JOIN contact_bindings b ON b.contact_id = s.contact_id WHERE s.endpoint = 'answers' AND s.event_id LIKE 'again-%'")
        .all() as { id: string }[];
      expect(again.map((r) => r.id).sort()).toEqual(Array.from({ length: replayed }, (_, i) => `telegram:again-${warmup + units + warmup + i}`).sort());
    } finally {
      db.close();
    }
  });
});
