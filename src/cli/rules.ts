// `lead-gateway rules check DIR` (offline: every problem of every file, as a gateway would refuse them)
// and `rules diff DIR --url` (a folder against the rules a running gateway has loaded).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { parse } from 'yaml';
import { checkRules, formatPath } from '../rules/loader.js';
import type { AdminClient } from './admin-client.js';
import { EXIT } from './exit.js';

export interface RulesCommandDeps {
  print(human: string, data: unknown): void;
  /** The running gateway named by --url (or LEAD_GATEWAY_URL); a usage error without one. */
  gateway(command: string): AdminClient;
  /** Whether a global option was given on the command line (not taken from the environment). */
  given(option: string): boolean;
}

/** A command that found what it looks for (problems, differences): exit 1 after its output. */
const found = (message: string) => Object.assign(new Error(message), { exitCode: EXIT.refused });

interface GatewayRules {
  rules_version: string;
  files: { name: string; sha256: string; content: string }[];
}

type FileChange =
  { name: string; change: 'added' | 'removed' } | { name: string; change: 'changed'; differences: string[] };

const shown = (value: unknown) => (value === undefined ? '(none)' : JSON.stringify(value));

/** The paths at which two parsed rules files differ, each with both values; arrays by position. */
function differences(before: unknown, after: unknown, path: (string | number)[] = [], out: string[] = []): string[] {
  const bothObjects = before !== null && after !== null && typeof before === 'object' && typeof after === 'object';
  if (bothObjects && Array.isArray(before) === Array.isArray(after)) {
    const keys = Array.isArray(before)
      ? Array.from({ length: Math.max(before.length, (after as unknown[]).length) }, (_, i) => i)
      : [...new Set([...Object.keys(before), ...Object.keys(after)])];
    for (const key of keys)
      differences(
        (before as Record<string | number, unknown>)[key],
        (after as Record<string | number, unknown>)[key],
        [...path, key],
        out,
      );
  } else if (JSON.stringify(before) !== JSON.stringify(after)) {
    const sign = before === undefined ? '+' : after === undefined ? '-' : '~';
    out.push(
      `${sign} ${formatPath(path)}: ${sign === '+' ? shown(after) : sign === '-' ? shown(before) : `${shown(before)} -> ${shown(after)}`}`,
    );
  }
  return out;
}

/** What the folder would change on the gateway: files added, removed, and changed with their differences. */
function compare(
  loaded: GatewayRules['files'],
  local: { name: string; sha256: string; content: string }[],
): FileChange[] {
  const theirs = new Map(loaded.map((f) => [f.name, f]));
  const ours = new Map(local.map((f) => [f.name, f]));
  const changes: FileChange[] = [];
  for (const name of [...new Set([...theirs.keys(), ...ours.keys()])].sort()) {
    const before = theirs.get(name);
    const after = ours.get(name);
    if (!before) changes.push({ name, change: 'added' });
    else if (!after) changes.push({ name, change: 'removed' });
    else if (before.sha256 !== after.sha256) {
      let found: string[];
      try {
        found = differences(parse(before.content), parse(after.content));
      } catch (error) {
        found = [`the folder's file is not valid YAML (${(error as Error).message.split('\n')[0]}): run rules check`];
      }
      changes.push({
        name,
        change: 'changed',
        differences: found.length > 0 ? found : ['(the same values: only comments, spacing or order differ)'],
      });
    }
  }
  return changes;
}

export function registerRulesCommands(program: Command, deps: RulesCommandDeps): void {
  const rules = program
    .command('rules')
    .description('rules files: check a folder offline, or compare it with what a running gateway has loaded');

  rules
    .command('check')
    .description(
      'check every rules file of a folder as a gateway would at start (no database, no gateway); exit 1 on any problem',
    )
    .argument('<dir>', 'the rules folder')
    .action((dir: string) => {
      const result = checkRules(dir);
      const summary =
        result.problems.length === 0
          ? `${dir}: ${result.files.length} file(s), no problem (rules version ${result.version})`
          : `${dir}: ${result.problems.length} problem(s) in ${result.files.length} file(s)`;
      // Each problem names its file and the path in it; stdout, so CI logs keep them in order with the summary.
      deps.print([...result.problems, summary].join('\n'), {
        dir,
        ok: result.problems.length === 0,
        files: result.files,
        problems: result.problems,
        rules_version: result.version,
      });
      if (result.problems.length > 0) throw found(`${result.problems.length} problem(s) in the rules of ${dir}`);
    });

  rules
    .command('diff')
    .description('compare a rules folder with the rules a running gateway has loaded (--url); exit 1 when they differ')
    .argument('<dir>', 'the rules folder')
    .action(async (dir: string) => {
      const local = checkRules(dir);
      const files = local.files.map((name) => {
        const content = readFileSync(join(dir, name), 'utf8');
        return { name, sha256: createHash('sha256').update(content).digest('hex'), content };
      });
      const loaded = await deps.gateway('rules diff').get<GatewayRules>('/rules');
      const changes = compare(loaded.files, files);
      const lines = changes.flatMap((c) =>
        c.change === 'changed'
          ? [`changed ${c.name}`, ...c.differences.map((d) => `  ${d}`)]
          : [`${c.change} ${c.name}`],
      );
      const same = changes.length === 0;
      const verdict = same
        ? `${dir} holds the rules the gateway runs (version ${loaded.rules_version})`
        : `${dir} differs from the gateway's rules (version ${loaded.rules_version}) in ${changes.length} file(s)`;
      // A folder the gateway would refuse is said too: deploying it would keep the gateway's rules.
      const refused =
        local.problems.length > 0
          ? [`${dir} has ${local.problems.length} problem(s) a gateway would refuse: run rules check`]
          : [];
      deps.print([...lines, ...refused, verdict].join('\n'), {
        dir,
        same,
        gateway_rules_version: loaded.rules_version,
        folder_rules_version: local.version,
        changes,
        problems: local.problems,
      });
      if (!same) throw found(`the rules of ${dir} differ from the gateway's`);
    });
}
