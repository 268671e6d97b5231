// `lead-gateway ported ...` and `lead-gateway not-found ...`: the "ported" flag beside the migration
// state, and the answers calls that got 404 (docs/migration.md), on the database or over the admin API.
import { InvalidArgumentError, type Command } from 'commander';
import type { z } from 'zod';
import { PortedNoteSchema, ReasonSchema } from '../admin/schemas.js';
import { NotFoundQuerySchema, type NotFoundPage } from '../migration/porting.js';
import { escapeControls as shown } from '../printable-text.js';
import type { Backend } from './backend.js';
import { table } from './table.js';

interface PortingCommandDeps {
  print(human: string, data: unknown): void;
  withBackend(fn: (backend: Backend) => Promise<void>): Promise<void>;
}

/** Checked by the admin API's own schema: refused the same way (exit 2) on the database as by a gateway. */
const checkedBy =
  <T>(schema: z.ZodType<T>) =>
  (value: string): T => {
    const result = schema.safeParse(value);
    if (!result.success) throw new InvalidArgumentError(result.error.issues.map((i) => i.message).join('; '));
    return result.data;
  };
const noteArg = checkedBy(PortedNoteSchema);
const reasonArg = checkedBy(ReasonSchema);
const limitArg = checkedBy(NotFoundQuerySchema.shape.limit.unwrap());

/** A page of 404s as a table: each id once, with the unlinked legacy leads of that person under it. */
export function notFoundText(page: NotFoundPage): string {
  if (page.items.length === 0) return 'no answers call got a 404';
  const rows = page.items.map((e) => [
    shown(e.external_contact_id),
    e.calls,
    e.first_at,
    e.last_at,
    e.legacy_leads.length === 0 ? '-' : e.legacy_leads.map((l) => `${l.lead_id} (${l.code})`).join(', '),
  ]);
  const capped = page.ids >= page.ids_max ? ` (the cap: a further id is not counted)` : '';
  return [
    table(['EXTERNAL_CONTACT_ID', 'CALLS', 'FIRST', 'LAST', 'UNLINKED LEGACY LEAD'], rows),
    '',
    `${page.ids} id(s), ${page.calls} call(s) in all${capped}`,
    ...(page.next === null ? [] : [`more: --after ${page.next}`]),
  ].join('\n');
}

export function registerPortingCommands(program: Command, deps: PortingCommandDeps): void {
  const ported = program
    .command('ported')
    .description(
      'the "ported" flag beside the migration state: marked by an owner or the service team, cleared by the service team',
    );
  ported
    .command('mark')
    .description('mark an integration "ported" (audited; the readiness reasons show it)')
    .argument('<integration>', 'id or workspace:integration handle')
    .option('--note <text>', 'what the owner or the service team says of it (no control characters)', noteArg)
    .action((ref: string, o: { note?: string }) =>
      deps.withBackend(async (b) => {
        const flag = await b.markPorted(ref, o.note);
        deps.print(`${ref} marked ported by ${flag.ported_by} at ${flag.ported_at}.`, flag);
      }),
    );
  ported
    .command('clear')
    .description('clear the "ported" flag (audited)')
    .argument('<integration>', 'id or workspace:integration handle')
    .option('--reason <text>', 'why, for the audit log (no control characters)', reasonArg)
    .action((ref: string, o: { reason?: string }) =>
      deps.withBackend(async (b) => {
        const result = await b.clearPorted(ref, o.reason);
        deps.print(`${ref} is no longer marked ported.`, result);
      }),
    );

  program
    .command('not-found')
    .description(
      'answers calls that got 404, per external_contact_id, the latest first, with the unlinked legacy lead of each person',
    )
    .argument('<integration>', 'id or workspace:integration handle')
    .option('--limit <n>', 'entries per page (default 50, at most 500)', limitArg)
    .option('--after <cursor>', 'the page after the one that printed this cursor')
    .action((ref: string, o: { limit?: number; after?: string }) =>
      deps.withBackend(async (b) => {
        const page = await b.notFound(ref, {
          ...(o.limit === undefined ? {} : { limit: o.limit }),
          ...(o.after === undefined ? {} : { after: o.after }),
        });
        deps.print(notFoundText(page), page);
      }),
    );
}
