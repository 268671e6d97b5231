// `lead-gateway copy --from <file>`: a stopped gateway's SQLite file into the PostgreSQL database of
// DATABASE_URL (src/store/copy.ts), its progress on stderr, the counts and their verdict on stdout.
import type { Command } from 'commander';
import {
  BROKEN_ROWS_SHOWN,
  BrokenReferencesError,
  copySqliteToPostgres,
  CopyError,
  type CopyResult,
  type SourceValue,
} from '../store/copy.js';
import { StoreOpenError } from '../store/store.js';
import { escapeControls } from '../printable-text.js';
import { table } from './table.js';
import { EXIT, EnvironmentError, RefusedError, UsageError } from './exit.js';
import { printErr } from './output.js';

interface CopyCommandDeps {
  env: Record<string, string | undefined>;
  print(human: string, data: unknown): void;
  /** Whether a global option was given on the command line (not taken from the environment). */
  given(option: string): boolean;
}

const figure = (n: number) => n.toLocaleString('en-US');

function summary(result: CopyResult): string {
  const rows = result.tables.map((t) => [t.table, figure(t.source), figure(t.target), figure(t.inserted)]);
  const verdict =
    result.short.length === 0
      ? `Counts checked: PostgreSQL holds at least the file's rows in each of the ${result.tables.length} tables.`
      : `INCOMPLETE: PostgreSQL holds fewer rows than the file in ${result.short.join(', ')}; run copy again.`;
  const skipped = result.skipped.map((s) => `  ${s.table}: ${s.why}`);
  return [
    `from ${result.from}`,
    `to   ${result.to}`,
    '',
    table(['TABLE', 'SQLITE', 'POSTGRESQL', 'NEW'], rows),
    '',
    verdict,
    'Not copied:',
    ...skipped,
  ].join('\n');
}

/** A value of the file as the terminal is given it: text quoted, its control characters escaped (a bot chose it). */
const shown = (value: SourceValue): string =>
  typeof value === 'string'
    ? escapeControls(JSON.stringify(value))
    : Buffer.isBuffer(value)
      ? `x'${value.toString('hex')}'`
      : String(value);

/** Each broken reference by table and column, how many rows, and the first of them by key. */
function brokenReport(error: BrokenReferencesError): string {
  const rows = error.broken.reduce((sum, b) => sum + b.count, 0);
  const lines = [
    `${error.location}: ${rows} rows name a row the file does not hold (written while SQLite's foreign keys were off); nothing was copied:`,
  ];
  for (const b of error.broken) {
    const which =
      b.count === 1
        ? '1 row'
        : b.count > BROKEN_ROWS_SHOWN
          ? `${figure(b.count)} rows, the first ${BROKEN_ROWS_SHOWN} by key`
          : `${figure(b.count)} rows`;
    lines.push(`  ${b.table}.${b.columns.join(', ')} names a row of ${b.parent} that is not there: ${which}:`);
    for (const row of b.rows) {
      const key = row.key.map(([column, value]) => `${column} ${shown(value)}`).join(', ');
      lines.push(`    ${key}: ${b.columns.map((column, i) => `${column} ${shown(row.names[i] ?? null)}`).join(', ')}`);
    }
  }
  lines.push(
    'Repair or delete these rows in the file (docs/runbook.md, "Rows that name a missing row"), then copy again.',
  );
  return lines.join('\n');
}

export function registerCopyCommand(program: Command, deps: CopyCommandDeps): void {
  const { env, print, given } = deps;
  program
    .command('copy')
    .description(
      "copy every table of a stopped gateway's SQLite file into the PostgreSQL database of DATABASE_URL (safe to run again)",
    )
    .requiredOption('--from <file>', 'the SQLite file of the gateway (stop it first)')
    .action(async (o: { from: string }) => {
      // The target is the one the PostgreSQL gateways will use, named where they read it: a URL on
      // the command line would show its password in ps and the shell history.
      if (given('databaseUrl'))
        throw new UsageError(
          'copy: the PostgreSQL database is the one in DATABASE_URL (the environment or .env), never --database-url',
        );
      if (given('database')) throw new UsageError('copy: --from names the SQLite file to copy, not --database');
      if (given('url') || given('create') || given('timeout'))
        throw new UsageError('copy works on the two databases themselves: --url, --timeout and --create do not apply');
      const url = env.DATABASE_URL;
      if (!url)
        throw new UsageError(
          'copy: set DATABASE_URL (the environment or .env) to the PostgreSQL database to copy into',
        );
      let result: CopyResult;
      try {
        result = await copySqliteToPostgres(o.from, url, printErr);
      } catch (error) {
        if (error instanceof BrokenReferencesError) throw new RefusedError(brokenReport(error), EXIT.refused);
        if (error instanceof StoreOpenError || error instanceof CopyError) throw new EnvironmentError(error.message);
        throw error;
      }
      print(summary(result), result);
      if (result.short.length > 0)
        throw Object.assign(new Error(`the copy is incomplete (${result.short.join(', ')})`), {
          exitCode: EXIT.refused,
        });
    });
}
