// A secret the CLI is given (a password, a legacy key): from a named environment variable or stdin, never
// from an argument, which every user of the host sees in `ps` and the shell keeps in its history.
import { UsageError } from './exit.js';

/**
 * The value of `variable` when it is set (and `stdinOnly` is not), else stdin read to its end with one
 * trailing newline dropped. A terminal on stdin is refused with how to give it instead.
 */
export async function readSecret(
  env: Record<string, string | undefined>,
  variable: string,
  how: string,
  stdinOnly = false,
): Promise<string> {
  const fromEnv = env[variable];
  if (!stdinOnly && fromEnv !== undefined && fromEnv !== '') return fromEnv;
  if (process.stdin.isTTY) throw new UsageError(how);
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}
