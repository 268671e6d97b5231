// Moving from the embedded default to PostgreSQL: every table of a stopped gateway's SQLite file copied
// into a PostgreSQL database, a batch of rows per statement, safe to run again, the counts checked.
// Like open-store.ts, the one other place that knows both engines: each keeps its own SQL.
import { openCopySource, type BrokenReference } from './sqlite/copy-source.js';
import { openCopyTarget } from './postgres/copy-target.js';

/** Rows per INSERT: 1,000 rows of the widest table (25 columns) stay far below PostgreSQL's 65,535 parameters. */
export const COPY_BATCH_ROWS = 1_000;

/**
 * The tables copied, parents before the tables whose foreign keys name them. Each has a primary key,
 * and its rows keep their ids, so a row copied before is found and left as it is.
 */
export const COPIED_TABLES = [
  'api_keys',
  'key_usage',
  'admin_credentials',
  'integration_states',
  'audit_log',
  'contacts',
  'contact_bindings',
  'leads',
  'lead_tags',
  'lead_comments',
  'lead_payments',
  'submissions',
  'custom_field_values',
  'answers',
  'answers_kept',
  'answers_not_kept',
  'api_usage',
  'ignored_fields',
  'integration_ported',
  'answers_not_found',
  'brownout_refusals',
  'switch_off_schedules',
  'calendar_moments',
  'webhook_endpoints',
  'webhook_events',
  'webhook_deliveries',
  'webhook_attempts',
  'brownout_windows',
  'legacy_samples',
  'test_matches',
  'legacy_tags',
  'console_users',
  'console_sessions',
  'console_unshown_keys',
] as const;

/** The tables of a SQLite file not copied, and why. */
export const SKIPPED_TABLES: Record<string, string> = {
  lead_counts: "derived: PostgreSQL's trigger counts each lead as it is inserted (into its stripes)",
  integration_lead_counts: "derived: PostgreSQL's trigger counts each lead as it is inserted (into its stripes)",
  readiness_probe: 'rewritten by every readiness check',
};

export interface CopiedTable {
  table: string;
  /** Rows in the SQLite file. */
  source: number;
  /** Rows in PostgreSQL after the copy. */
  target: number;
  /** Rows this run inserted (0 for a table copied before). */
  inserted: number;
}

export interface CopyResult {
  from: string;
  to: string;
  tables: CopiedTable[];
  skipped: { table: string; why: string }[];
  /** Tables PostgreSQL holds fewer rows of than the file: the copy is not complete. */
  short: string[];
}

/** A copy that cannot start or go on: what is wrong, in the operator's words. */
export class CopyError extends Error {}

export type { BrokenReference, SourceValue } from './sqlite/copy-source.js';

/** Rows named per broken reference when a copy is refused: the first by key (the count says how many in all). */
export const BROKEN_ROWS_SHOWN = 10;

/**
 * The file holds rows that name a row it does not hold (written while SQLite's foreign keys were off:
 * the sqlite3 shell's default). PostgreSQL keeps no foreign key on most of them (migration 16), so they
 * would be copied as they are, and a binding that names a missing person makes that person's every
 * lead fail: the copy is refused before anything is written, each reference named.
 */
export class BrokenReferencesError extends CopyError {
  constructor(
    readonly location: string,
    readonly broken: BrokenReference[],
  ) {
    const rows = broken.reduce((sum, b) => sum + b.count, 0);
    super(
      `${location}: ${rows} rows name a row the file does not hold (${broken.map((b) => `${b.table}.${b.columns.join(', ')}`).join('; ')}); nothing was copied`,
    );
  }
}

const figure = (n: number) => n.toLocaleString('en-US');

/**
 * Copies the SQLite file at `from` into the PostgreSQL database at `url`, telling `progress` one line
 * per table (and one per 100 batches of a long one). The file is held alone from start to end
 * (refused while a gateway has it open), and refused if a row names a row it does not hold; the
 * database is migrated first, as a gateway migrates it.
 */
export async function copySqliteToPostgres(
  from: string,
  url: string,
  progress: (line: string) => void,
): Promise<CopyResult> {
  const source = openCopySource(from);
  try {
    const unknown = source
      .tables()
      .filter((t) => !(COPIED_TABLES as readonly string[]).includes(t) && !(t in SKIPPED_TABLES));
    if (unknown.length > 0)
      throw new CopyError(
        `${source.location} holds table(s) this release does not know how to copy: ${unknown.join(', ')}`,
      );
    // Before the target is touched (its migration included): a refused file leaves it as it was.
    const broken = source.brokenReferences(COPIED_TABLES, BROKEN_ROWS_SHOWN);
    if (broken.length > 0) throw new BrokenReferencesError(source.location, broken);
    const target = await openCopyTarget(url);
    try {
      const tables: CopiedTable[] = [];
      for (const table of COPIED_TABLES) {
        const columns = source.columns(table);
        const types = await target.columns(table);
        const missing = columns.filter((c) => !types.has(c));
        if (missing.length > 0) throw new CopyError(`${table}: PostgreSQL has no column ${missing.join(', ')}`);
        const total = source.count(table);
        let done = 0;
        let inserted = 0;
        let batches = 0;
        for (const rows of source.batches(table, COPY_BATCH_ROWS)) {
          try {
            inserted += await target.insert(table, columns, rows);
          } catch (error) {
            // The rows before this batch are in: after fixing the cause, running copy again goes on from here.
            throw new CopyError(
              `${table}: the batch after row ${figure(done)} of ${figure(total)} was refused by PostgreSQL: ${(error as Error).message}`,
              { cause: error },
            );
          }
          done += rows.length;
          if (++batches % 100 === 0 && done < total) progress(`copying ${table}: ${figure(done)} / ${figure(total)}`);
        }
        progress(`copied ${table}: ${figure(done)} / ${figure(total)} (${figure(inserted)} new)`);
        tables.push({ table, source: total, target: 0, inserted });
      }
      await target.recountKept();
      // Checked once every table is in: nothing writes the file meanwhile, so its counts still hold.
      for (const copied of tables) copied.target = await target.count(copied.table);
      const short = tables.filter((t) => t.target < t.source).map((t) => t.table);
      return {
        from: source.location,
        to: target.location,
        tables,
        skipped: Object.entries(SKIPPED_TABLES).map(([table, why]) => ({ table, why })),
        short,
      };
    } finally {
      await target.close();
    }
  } finally {
    source.close();
  }
}
