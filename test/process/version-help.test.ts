// --version and --help of the server and the CLI print and exit 0; an unknown option is one line, exit 2.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { builtCli, builtMain } from '../support/child-gateway.js';

const ROOT = join(import.meta.dirname, '..', '..');
const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };

// No ADMIN_TOKEN and no database: --version and --help must answer before the configuration is read.
/** `entry` is a script of the run's build (test/support/build-setup.ts), as `dist/` holds it. */
const run = (entry: string, ...args: string[]) => {
  const result = spawnSync(process.execPath, [entry, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', DATABASE_PATH: '/nonexistent/gateway.db' },
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { code: result.status, out: result.stdout, err: result.stderr };
};

describe.each([
  ['the server', builtMain(), /^Usage: node dist\/main\.js/m],
  ['the CLI', builtCli(), /^Usage: lead-gateway \[options\] \[command\]/m],
])('%s', { timeout: 60_000 }, (_name, entry, usage) => {
  it('prints its version with --version, exit 0', () => {
    const result = run(entry, '--version');
    expect(result).toMatchObject({ code: 0, err: '' });
    expect(result.out).toBe(`lead-gateway ${version}\n`);
  });

  it('prints its usage with --help, exit 0', () => {
    const result = run(entry, '--help');
    expect(result.code).toBe(0);
    expect(result.out).toMatch(usage);
    expect(result.out).toContain('--version');
  });

  it('refuses an unknown option naming it, exit 2, without a stack', () => {
    const result = run(entry, '--no-such-option');
    expect(result.code).toBe(2);
    expect(result.err).toMatch(/^(error: )?unknown option '--no-such-option'/im);
    expect(result.err).not.toMatch(/\n\s+at |ERR_PARSE_ARGS/);
    expect(result.out).toBe('');
  });
});

// The tests start the run's build; the scripts a contributor types run the sources through tsx.
describe('npm run cli', () => {
  it('runs the CLI from the sources, as the README says', () => {
    const result = spawnSync('npm', ['run', '--silent', 'cli', '--', '--version'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: process.env.HOME ?? '/tmp',
        DATABASE_PATH: '/nonexistent/gateway.db',
      },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toBe(`lead-gateway ${version}\n`);
  });
});
