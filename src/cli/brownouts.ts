// `lead-gateway brownout`, `brownouts` and `cancel-brownout`: an integration's brownout windows set
// through the admin API (docs/runbook.md, "2b. Brownouts"), on the database or on a running gateway.
import { InvalidArgumentError, type Command } from 'commander';
import { AppError } from '../errors.js';
import {
  BrownoutInputSchema,
  BrownoutPageQuerySchema,
  brownoutEntrySentence,
  type BrownoutPage,
} from '../migration/brownout-windows.js';
import type { Backend } from './backend.js';
import { UsageError } from './exit.js';
import { table } from './table.js';

const limitArg = (value: string): number => {
  const result = BrownoutPageQuerySchema.shape.limit.unwrap().safeParse(value);
  if (!result.success) throw new InvalidArgumentError(result.error.issues.map((i) => i.message).join('; '));
  return result.data;
};

/** A page as a table, one row per window, the earliest first. */
export function brownoutsText(page: BrownoutPage): string {
  if (page.items.length === 0) return 'no brownout windows';
  const rows = page.items.map((e) => [
    e.id,
    e.source,
    e.start,
    e.end,
    e.minutes,
    e.status,
    e.created_by ?? (e.source === 'rules' ? 'rules' : '-'),
  ]);
  return [
    table(['ID', 'SOURCE', 'START', 'END', 'MINUTES', 'STATUS', 'BY'], rows),
    ...(page.next === null ? [] : ['', `more: --after ${page.next}`]),
  ].join('\n');
}

/** Bad input is a usage error (exit 2) on the database as over the admin API, which answers it 422. */
const asUsage = (error: unknown): never => {
  if (error instanceof AppError && error.code === 'validation-failed') throw new UsageError(error.message);
  throw error;
};

export function registerBrownoutCommands(
  program: Command,
  deps: {
    print(human: string, data: unknown): void;
    withBackend(fn: (backend: Backend) => Promise<void>): Promise<void>;
  },
): void {
  program
    .command('brownout')
    .description('add a brownout window: every call with the legacy key inside it is refused with 403')
    .argument('<integration>', 'id or workspace:integration handle')
    .requiredOption('--start <time>', 'when, an ISO 8601 date and time with its zone, e.g. 2027-02-20T10:00:00Z')
    .requiredOption('--minutes <n>', 'how long, in whole minutes (at most 240)', Number)
    .action((ref: string, o: { start: string; minutes: number }) =>
      deps.withBackend(async (b) => {
        const input = BrownoutInputSchema.safeParse({ start: o.start, minutes: o.minutes });
        if (!input.success) {
          const issue = input.error.issues[0]!;
          throw new UsageError(`--${String(issue.path[0] ?? 'start')}: ${issue.message}`);
        }
        const entry = await b.addBrownout(ref, input.data).catch(asUsage);
        deps.print(brownoutEntrySentence(entry), entry);
      }),
    );

  program
    .command('brownouts')
    .description("the integration's brownout windows, the rules' and the stored ones, the earliest first")
    .argument('<integration>', 'id or workspace:integration handle')
    .option('--limit <n>', 'windows per page (default 50, at most 100)', limitArg)
    .option('--after <cursor>', 'the page after the one that printed this cursor')
    .action((ref: string, o: { limit?: number; after?: string }) =>
      deps.withBackend(async (b) => {
        const page = await b.brownouts(ref, o);
        deps.print(brownoutsText(page), page);
      }),
    );

  program
    .command('cancel-brownout')
    .description('cancel a stored brownout window (a window of the rules is removed from the rules)')
    .argument('<integration>', 'id or workspace:integration handle')
    .argument('<id>', 'the window id, as `brownouts` lists it')
    .action((ref: string, id: string) =>
      deps.withBackend(async (b) => {
        const entry = await b.cancelBrownout(ref, id);
        deps.print(`Cancelled: ${brownoutEntrySentence(entry)}`, entry);
      }),
    );
}
