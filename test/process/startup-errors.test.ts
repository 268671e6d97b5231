// Start-up and CLI errors name the thing to fix in one line; the CLI never makes a database unasked.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EXAMPLE_RULES } from '../helper.js';
import { builtCli, builtMain } from '../support/child-gateway.js';

const ROOT = join(import.meta.dirname, '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-startup-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const run = (entry: string, args: string[], env: Record<string, string>) => {
  const result = spawnSync(process.execPath, [entry, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', PORT: '0', RULES_DIR: EXAMPLE_RULES, LOG_LEVEL: 'warn', ...env },
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { code: result.status, out: result.stdout, err: result.stderr };
};
const start = (databasePath: string) => run(builtMain(), ['--demo'], { DATABASE_PATH: databasePath });
const cli = (databasePath: string, ...args: string[]) => run(builtCli(), args, { DATABASE_PATH: databasePath });

describe('an unopenable DATABASE_PATH', () => {
  const aFile = join(dir, 'plain-file');
  writeFileSync(aFile, 'not a database');
  const cases: [string, string, RegExp][] = [
    ['a directory', dir, /it is a folder; name a file in it/],
    ['a folder under a file', join(aFile, 'gateway.db'), /plain-file is a file, not a folder/],
    ['a file that is not a database', aFile, /it is not a SQLite database/],
  ];
  if (process.getuid?.() === 0) {
    const locked = join(dir, 'locked');
    mkdirSync(locked);
    spawnSync('chattr', ['+i', locked]);
    afterAll(() => void spawnSync('chattr', ['-i', locked]));
    cases.push([
      'an unwritable folder (chattr +i)',
      join(locked, 'gateway.db'),
      /it cannot be (opened or created|written)/,
    ]);
    cases.push([
      'a folder that cannot be created',
      join(locked, 'sub', 'gateway.db'),
      /its folder .*locked\/sub cannot be created \(EPERM\)/,
    ]);
  }

  it.each(cases)('%s: one line naming the variable and the path, exit 1, no stack', (_name, path, problem) => {
    const result = start(path);
    expect(result.code).toBe(1);
    const lines = result.err.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(`^DATABASE_PATH: cannot open the database ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: `),
    );
    expect(lines[0]).toMatch(problem);
    expect(result.err).not.toMatch(/\n\s+at /);
  });
});

describe('the CLI and the database file', () => {
  it('opens an existing database only, unless told to create one, and says which file it opened', () => {
    const path = join(dir, 'cli', 'gateway.db');
    const missing = cli(path, 'integrations');
    expect(missing.code).toBe(3);
    expect(missing.err).toMatch(
      /^error: --database \/ DATABASE_PATH: cannot open the database .*cli\/gateway\.db: no such file \(.*pass --create/m,
    );
    expect(existsSync(path)).toBe(false);
    expect(existsSync(join(dir, 'cli'))).toBe(false);

    const created = cli(path, '--create', 'integrations');
    expect(created.code).toBe(0);
    expect(created.err).toBe(`database: ${path}\n`);
    expect(existsSync(path)).toBe(true);

    const opened = cli(path, 'integrations');
    expect(opened.code).toBe(0);
    expect(opened.err).toBe(`database: ${path}\n`);
    expect(opened.out).toMatch(/^brightpath:telegram-bot\s+legacy/m);
  });

  it('names an unusable database file in one line with exit 3', () => {
    const result = cli(dir, 'integrations');
    expect(result.code).toBe(3);
    expect(result.err.trim().split('\n')).toEqual([
      expect.stringMatching(/^error: --database \/ DATABASE_PATH: cannot open the database .*: it is a folder/),
    ]);
  });
});
