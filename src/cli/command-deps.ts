// What a group of CLI commands is given by the program (src/cli/main.ts): the environment, output, and
// the two ways a command reaches its target (the database, or a running gateway's admin API).
import type { Backend } from './backend.js';
import type { Context } from './database-backend.js';

export interface CommandDeps {
  /** The environment with the .env file beneath it, as the server reads it. */
  env: Record<string, string | undefined>;
  /** The audit name of a change made on the database (the account that runs the CLI). */
  actor: string;
  /** Prints the human text, or the data as JSON under --json. */
  print(human: string, data: unknown): void;
  /** Whether a global option was given on the command line (not taken from the environment). */
  given(option: string): boolean;
  /** A command with an admin API equivalent: on the database or on a running gateway. */
  withBackend(fn: (backend: Backend) => Promise<void>): Promise<void>;
  /** A command without an admin API equivalent: refused in API mode, saying why. */
  onDatabase(command: string, why: string, fn: (ctx: Context) => Promise<void>): Promise<void>;
}
