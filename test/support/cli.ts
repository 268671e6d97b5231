// The built CLI as a child process on a test gateway's own database (its file, or its PostgreSQL
// database), with the example rules and the admin token, as an operator on the gateway's host runs it.
import { join } from 'node:path';
import { ADMIN_TOKEN, EXAMPLE_RULES, type Gateway } from '../helper.js';
import { builtCli } from './child-gateway.js';
import { runOwned } from './owned.js';
import { databaseEnv } from './store.js';

const ROOT = join(import.meta.dirname, '..', '..');

export interface CliRun {
  code: number;
  out: string;
  err: string;
}

/** A function that runs the CLI with `args` on `gw`'s database; `--url` among them asks a gateway instead. */
export function cliOn(gw: Gateway): (...args: string[]) => Promise<CliRun> {
  return async (...args) => {
    const run = await runOwned(process.execPath, [builtCli(), ...args], {
      cwd: ROOT,
      env: {
        ...process.env,
        ...databaseEnv(gw.store),
        RULES_DIR: EXAMPLE_RULES,
        LEAD_GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
      },
      timeoutMs: 30_000,
    });
    return { code: run.code ?? -1, out: run.stdout, err: run.stderr };
  };
}
