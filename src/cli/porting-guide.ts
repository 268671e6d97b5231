// `lead-gateway porting-guide <integration>`: the integration's porting guide as Markdown on stdout
// (`--json`: the admin API's JSON), on the database or on a running gateway (--url).
import type { Command } from 'commander';
import type { Backend } from './backend.js';
import { guideMarkdown } from '../porting/markdown.js';

interface PortingGuideCommandDeps {
  print(human: string, data: unknown): void;
  withBackend(fn: (backend: Backend) => Promise<void>): Promise<void>;
}

export function registerPortingGuideCommand(program: Command, deps: PortingGuideCommandDeps): void {
  program
    .command('porting-guide')
    .description(
      "an integration's porting guide: each legacy route it called in 30 days and the v1 request that replaces it (Markdown; --json)",
    )
    .argument('<integration>', 'id or workspace:integration handle')
    .action((ref: string) =>
      deps.withBackend(async (b) => {
        const guide = await b.portingGuide(ref);
        deps.print(guideMarkdown(guide), guide);
      }),
    );
}
