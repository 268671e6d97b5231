// How a CLI command ends: its exit code, and the errors that choose one (printed as one line, no stack).
import { CommanderError } from 'commander';
import { AppError } from '../errors.js';
import { RulesError } from '../rules/loader.js';
import { printErr } from './output.js';

/** Exit codes: 0 done, 1 refused (unknown integration, a state move not allowed), 2 usage, 3 environment. */
export const EXIT = { refused: 1, usage: 2, environment: 3 } as const;

/** The command line itself is wrong or contradicts itself: exit 2. */
export class UsageError extends Error {}

/** The database, the rules, the gateway or the credential cannot be used: exit 3. */
export class EnvironmentError extends Error {}

/** The gateway refused the request (a 4xx problem other than authentication): exit 1, or 2 for a 400/422. */
export class RefusedError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

/** Prints what ended a command, in one line (the rules' own report may be several), and its exit code. */
export function exitFor(error: unknown): number {
  if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : EXIT.usage;
  if (error instanceof RulesError) {
    printErr(error.message);
    return EXIT.environment;
  }
  printErr(`error: ${(error as Error).message}`);
  if (error instanceof UsageError) return EXIT.usage;
  if (error instanceof AppError) return EXIT.refused;
  if (error instanceof RefusedError) return error.exitCode;
  if (error instanceof EnvironmentError) return EXIT.environment;
  return (error as { exitCode?: number }).exitCode ?? EXIT.environment;
}
