// The secrets check every test gateway runs when it closes: no raw key or token may be found in
// its log or in its database files (main file and WAL), whatever the test did with them.
import { existsSync, readFileSync } from 'node:fs';

/** Names of the files (and which secret's first characters) where a secret was found; empty when clean. */
export function secretsFoundIn(
  files: string[],
  secrets: Iterable<string>,
  filter: (text: string) => string = (t) => t,
): string[] {
  const found: string[] = [];
  const contents = files
    .filter((f) => existsSync(f))
    .map((f) => [f, filter(readFileSync(f).toString('latin1'))] as const);
  for (const secret of secrets) {
    if (secret.length < 8) continue; // too short to be a key; would match by chance
    for (const [file, text] of contents) {
      if (text.includes(secret)) found.push(`${file} holds ${secret.slice(0, 6)}…`);
    }
  }
  return found;
}

/** Only the JSON log lines of a process's output (the demo banner prints its keys on purpose). */
export const logLinesOnly = (text: string): string =>
  text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .join('\n');
