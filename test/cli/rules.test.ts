// `lead-gateway rules check` (offline, every problem of every file) and `rules diff` against a running
// gateway, as child processes.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, EXAMPLE_RULES, startGateway } from '../helper.js';
import { runOwned } from '../support/owned.js';
import { builtCli } from '../support/child-gateway.js';

const ROOT = join(import.meta.dirname, '..', '..');
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const folder = (from?: string) => {
  const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-rules-cli-'));
  dirs.push(dir);
  if (from) cpSync(from, dir, { recursive: true });
  return dir;
};

// No database and no gateway: DATABASE_PATH names a file that does not exist, and nothing may create it.
function cli(env: Record<string, string>, ...args: string[]) {
  const run = spawnSync(process.execPath, [builtCli(), ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', DATABASE_PATH: join(folder(), 'none', 'gateway.db'), ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { code: run.status, out: run.stdout, err: run.stderr };
}

/** The CLI without blocking this process, whose event loop serves the gateway it talks to. */
function cliAsync(env: Record<string, string>, ...args: string[]): Promise<{ code: number; out: string; err: string }> {
  return runOwned(process.execPath, [builtCli(), ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    timeoutMs: 30_000,
  }).then((run) => ({
    code: run.code ?? -1,
    out: run.stdout,
    err: run.stderr,
  }));
}

const brightpath = readFileSync(join(EXAMPLE_RULES, 'brightpath.yaml'), 'utf8');

describe('lead-gateway rules check', { timeout: 60_000 }, () => {
  it("passes the repository's rules folder: exit 0 and a one-line summary", () => {
    const result = cli({}, 'rules', 'check', 'rules');
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/^rules: 2 file\(s\), no problem \(rules version [0-9a-f]{12}\)\n$/);
  });

  it('lists every problem of every file, each with its file and the path in it, then exits 1', () => {
    const dir = folder(EXAMPLE_RULES);
    // A YAML syntax error, a bad reference and a wrong type in a second file, a third file still sound.
    writeFileSync(join(dir, 'broken-syntax.yaml'), 'format_version: 1\nworkspace: [unclosed\n');
    writeFileSync(
      join(dir, 'brightpath.yaml'),
      brightpath.replace('stage: New inquiry', 'stage: Nowhere').replace('format_version: 1', 'format_version: "one"'),
    );
    const result = cli({}, '--json', 'rules', 'check', dir);
    expect(result.code).toBe(1);
    const report = JSON.parse(result.out) as { ok: boolean; files: string[]; problems: string[] };
    expect(report.ok).toBe(false);
    expect(report.files).toEqual(['brightpath.yaml', 'broken-syntax.yaml', 'smile-dental.yaml']);
    expect(report.problems).toEqual([
      expect.stringMatching(new RegExp(`^${dir}/brightpath\\.yaml: format_version: `)),
      expect.stringMatching(new RegExp(`^${dir}/broken-syntax\\.yaml: line \\d+: `)),
    ]);

    const human = cli({}, 'rules', 'check', dir);
    expect(human.code).toBe(1);
    const lines = human.out.trim().split('\n');
    expect(lines.at(-1)).toBe(`${dir}: 2 problem(s) in 3 file(s)`);
    expect(lines.slice(0, -1)).toEqual(report.problems);
    expect(human.err).toMatch(/^error: 2 problem\(s\) in the rules of /);
  });

  it('reports each bad reference of a file, not only the first', () => {
    const dir = folder(EXAMPLE_RULES);
    writeFileSync(
      join(dir, 'brightpath.yaml'),
      brightpath.replace('stage: New inquiry', 'stage: Nowhere').replace('assigned_to: dilnoza', 'assigned_to: nobody'),
    );
    const report = JSON.parse(cli({}, '--json', 'rules', 'check', dir).out) as { problems: string[] };
    expect(report.problems.length).toBeGreaterThanOrEqual(2);
    expect(report.problems.join('\n')).toMatch(/integrations\[0\]\.lead_defaults\.stage: .*Nowhere/);
    expect(report.problems.join('\n')).toMatch(/nobody/);
  });
});

describe('lead-gateway rules diff', { timeout: 90_000 }, () => {
  it('compares a folder with the rules a running gateway has loaded: one file changed, one added, exit 1; the same folder, exit 0', async () => {
    const gw = await startGateway();
    try {
      const base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
      const env = { LEAD_GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN };

      const same = await cliAsync(env, '--url', base, 'rules', 'diff', EXAMPLE_RULES);
      expect(same).toMatchObject({ code: 0, err: `gateway: ${base}\n` });
      expect(same.out).toMatch(/holds the rules the gateway runs \(version [0-9a-f]{12}\)\n$/);

      const dir = folder(EXAMPLE_RULES);
      writeFileSync(
        join(dir, 'brightpath.yaml'),
        brightpath.replace('name: BrightPath IT Academy', 'name: BrightPath Academy'),
      );
      writeFileSync(
        join(dir, 'school.yaml'),
        readFileSync(join(EXAMPLE_RULES, 'smile-dental.yaml'), 'utf8').replace('slug: smile-dental', 'slug: school'),
      );
      const differs = await cliAsync(env, '--url', base, 'rules', 'diff', dir);
      expect(differs.code).toBe(1);
      expect(differs.out.trim().split('\n')).toEqual([
        'changed brightpath.yaml',
        '  ~ workspace.name: "BrightPath IT Academy" -> "BrightPath Academy"',
        'added school.yaml',
        expect.stringMatching(/differs from the gateway's rules \(version [0-9a-f]{12}\) in 2 file\(s\)$/),
      ]);
      const json = JSON.parse((await cliAsync(env, '--json', '--url', base, 'rules', 'diff', dir)).out) as {
        same: boolean;
        changes: unknown[];
      };
      expect(json).toMatchObject({
        same: false,
        changes: [
          { name: 'brightpath.yaml', change: 'changed' },
          { name: 'school.yaml', change: 'added' },
        ],
      });
    } finally {
      await gw.close();
    }
  });

  it('needs a gateway: without --url it is a usage error (exit 2)', () => {
    const result = cli({}, 'rules', 'diff', EXAMPLE_RULES);
    expect(result.code).toBe(2);
    expect(result.err).toMatch(/rules diff compares with a running gateway: give --url/);
  });
});
