// `lead-gateway migrate`: the database's schema brought up to date (database only).
import type { Command } from 'commander';
import type { CommandDeps } from './command-deps.js';

export function registerSchemaCommands(program: Command, deps: CommandDeps): void {
  program
    .command('migrate')
    .description(
      "bring the database's schema up to date (the gateway also does at start, under the same lock; database only)",
    )
    .action(() =>
      deps.onDatabase(
        'migrate',
        'a running gateway brought its schema up to date when it started',
        async ({ store }) => {
          const { version, applied } = store.schema;
          const human =
            applied.length > 0
              ? `Applied migration(s) ${applied.join(', ')}; the schema is at version ${version}.`
              : `The schema is up to date at version ${version}.`;
          deps.print(human, { engine: store.engine, version, applied });
        },
      ),
    );
}
