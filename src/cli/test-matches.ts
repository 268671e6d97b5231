// `lead-gateway test-matches <integration>`: the live persons the integration's test calls found
// (docs/api.md, "Test mode"), on the database or over the admin API.
import { InvalidArgumentError, type Command } from 'commander';
import { TestMatchQuerySchema, type TestMatchPage } from '../migration/test-matches.js';
import { escapeControls as shown } from '../printable-text.js';
import type { Backend } from './backend.js';
import { table } from './table.js';

const limitArg = (value: string): number => {
  const result = TestMatchQuerySchema.shape.limit.unwrap().safeParse(value);
  if (!result.success) throw new InvalidArgumentError(result.error.issues.map((i) => i.message).join('; '));
  return result.data;
};

/** A page as a table, one row per test key and person; the event_id is the bot's text, its controls escaped. */
export function testMatchesText(page: TestMatchPage): string {
  if (page.items.length === 0) return 'no test call found a live person';
  const rows = page.items.map((e) => [
    e.key_prefix ?? e.key_id,
    e.contact_id,
    e.lead_id ?? '-',
    e.own ? 'own' : 'other',
    e.matched_by,
    e.calls,
    e.first_at,
    e.last_at,
    `${e.endpoint} ${shown(e.last_event_id)}`,
  ]);

  return [
    table(['KEY', 'PERSON', 'LEAD', 'WHOSE', 'MATCHED BY', 'CALLS', 'FIRST', 'LAST', 'LAST CALL'], rows),
    '',
    `${page.rows} row(s); at most ${page.rows_max_per_key} per test key`,
    ...(page.next === null ? [] : [`more: --after ${page.next}`]),
  ].join('\n');
}

export function registerTestMatchesCommand(
  program: Command,
  deps: {
    print(human: string, data: unknown): void;
    withBackend(fn: (backend: Backend) => Promise<void>): Promise<void>;
  },
): void {
  program
    .command('test-matches')
    .description(
      'live persons that test calls found, per test key and person, the newest first (kept RETENTION_USAGE_DAYS)',
    )
    .argument('<integration>', 'id or workspace:integration handle')
    .option('--limit <n>', 'rows per page (default 50, at most 500)', limitArg)
    .option('--after <cursor>', 'the page after the one that printed this cursor')
    .action((ref: string, o: { limit?: number; after?: string }) =>
      deps.withBackend(async (b) => {
        const page = await b.testMatches(ref, {
          ...(o.limit === undefined ? {} : { limit: o.limit }),
          ...(o.after === undefined ? {} : { after: o.after }),
        });
        deps.print(testMatchesText(page), page);
      }),
    );
}
