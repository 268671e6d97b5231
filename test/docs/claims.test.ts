// What the README and docs say about the project itself, held against the project: the documents
// they cite exist, and the install, Node and CI facts match package.json, the lockfile and .ci/run.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/child-gateway.js';
import { DOC_FILES } from './doc-commands.js';
import { migrations as sqliteMigrations } from '../../src/store/sqlite/migrations.js';
import { migrations as postgresMigrations } from '../../src/store/postgres/migrations.js';

const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
/** The docs, and the performance log beside the bench's results, which docs/performance.md cites. */
const docFiles = [...DOC_FILES, 'bench/results/LOG.md'];
const readme = read('README.md');
/** Where a contributor reads what the machine needs, what npm prints and what CI runs. */
const contributing = read('docs/contributing.md');
const pkg = JSON.parse(read('package.json')) as { engines: { node: string }; scripts: Record<string, string> };

/** The text of a Markdown file outside its fenced blocks. */
const prose = (markdown: string) => markdown.replace(/^\s*(`{3,})[^\n]*\n[\s\S]*?^\s*\1\s*$/gm, '');

/** GitHub's anchor of a heading. */
const slug = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

/** Whether an `engines.node` range admits a Node version, for the forms lockfiles hold. */
function admits(range: string, version: string): boolean {
  const parse = (s: string) =>
    s
      .replace(/^v/, '')
      .split('.')
      .map((x) => (x === 'x' || x === '*' ? Number.NaN : Number(x)));
  const v = parse(version);
  const compare = (a: number[], b: number[]) => {
    for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return Math.sign((a[i] ?? 0) - (b[i] ?? 0));
    return 0;
  };
  const normalised = range.replace(/(>=|<=|>|<|=|\^|~)\s+/g, '$1').replace(/(\S+)\s+-\s+(\S+)/g, '>=$1 <=$2');
  return normalised.split('||').some((alternative) =>
    alternative
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .every((comparator) => {
        const [, op = '', rest = ''] = /^(>=|<=|>|<|\^|~|=)?(.+)$/.exec(comparator)!;
        const p = parse(rest);
        if (op === '>=') return compare(v, p) >= 0;
        if (op === '>') return compare(v, p) > 0;
        if (op === '<') return compare(v, p) < 0;
        if (op === '<=') return compare(v, p) <= 0;
        if (op === '^') return compare(v, p) >= 0 && v[0] === p[0];
        if (op === '~') return compare(v, p) >= 0 && v[0] === p[0] && v[1] === p[1];
        return p.every((part, i) => Number.isNaN(part) || part === v[i]);
      }),
  );
}

describe('the docs cite', () => {
  it("only the repository's own documents, never sections of one that is not in it", () => {
    for (const file of docFiles) {
      const text = read(file);
      expect(text, file).not.toMatch(/\bseed\b/i);
      expect(text, file).not.toMatch(/\bsections? \d/i);
    }
  });

  it('files and headings that exist', () => {
    const broken: string[] = [];
    for (const file of docFiles) {
      for (const [, target = ''] of prose(read(file)).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^(https?:|mailto:|\/)/.test(target)) continue;
        const [path = '', anchor] = target.split('#');
        const resolved = path === '' ? file : join(dirname(file), path);
        if (!existsSync(join(ROOT, resolved))) {
          broken.push(`${file}: ${target}`);
          continue;
        }
        if (anchor === undefined || !resolved.endsWith('.md')) continue;
        const headings = [...prose(read(resolved)).matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!));
        if (!headings.includes(anchor)) broken.push(`${file}: ${target} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });
});

describe('docs/contributing.md, and the README where it says the same', () => {
  it('states the Node version of package.json, and names every runtime dependency that declares a later one', () => {
    const minimum = /^>=(\d+\.\d+)$/.exec(pkg.engines.node)?.[1];
    expect(minimum).toBeDefined();
    for (const text of [contributing, readme]) expect(text).toContain(`${minimum} or newer`);
    const lock = JSON.parse(read('package-lock.json')) as {
      packages: Record<string, { dev?: boolean; optional?: boolean; engines?: { node?: string } }>;
    };
    const laterNode = Object.entries(lock.packages)
      .filter(
        ([path, p]) =>
          path !== '' && !p.dev && !p.optional && p.engines?.node && !admits(p.engines.node, `${minimum}.0`),
      )
      .map(([path]) => path.split('node_modules/').pop()!);
    expect(laterNode.length).toBeGreaterThan(0);
    expect(contributing).toContain('EBADENGINE');
    for (const name of laterNode)
      expect(contributing, `docs/contributing.md says why ${name}'s EBADENGINE warning is harmless`).toContain(
        `\`${name}\``,
      );
  });

  it('says which Node the container image runs', () => {
    const major = /^FROM node:(\d+)[.-]/m.exec(read('Dockerfile'))?.[1];
    expect(contributing).toContain(`the container image runs Node ${major}`);
  });

  it('says what npm test runs and lists the steps of CI in the order .ci/run takes them', () => {
    expect(pkg.scripts.test).toBe('vitest run --project sqlite');
    expect(pkg.scripts['test:all']).toBe('npm test && npm run test:postgres && npm run test:resilience');
    expect(read('vitest.config.ts')).toMatch(/name: 'sqlite',\s+include: \['test\/\*\*\/\*\.test\.ts'\],/);
    expect(contributing).toMatch(
      /`npm test` runs every test under `test\/` \(vitest\) on SQLite, the resilience suites among them at a\s+small size/,
    );
    const short = (step: string) => step.replace(/^npm (run )?/, '').split(' ')[0];
    const ci = [...read('.ci/run').matchAll(/^npm (?:ci|test|run \S+)/gm)].map((m) => short(m[0]));
    const paragraph = /CI \(`bash \.ci\/run`\) runs[\s\S]*?\n\n/.exec(contributing)?.[0] ?? '';
    const said = [...paragraph.matchAll(/`([^`]+)`/g)]
      .map((m) => m[1]!)
      .filter((s) => s !== 'bash .ci/run')
      .map(short);
    expect(said).toEqual(ci);
  });

  it("shows npm's install-scripts warning as npm prints it, naming every locked package with an install script and its version", () => {
    const lock = JSON.parse(read('package-lock.json')) as {
      packages: Record<string, { version: string; hasInstallScript?: boolean; optional?: boolean }>;
    };
    const scripted = Object.entries(lock.packages)
      .filter(([path, p]) => path !== '' && p.hasInstallScript && !p.optional)
      .map(([path, p]) => ({ name: path.split('node_modules/').pop()!, version: p.version }));
    expect(scripted.length).toBeGreaterThan(0);
    expect(pkg).not.toHaveProperty('allowScripts');
    const count = scripted.length === 1 ? '1 package has' : `${scripted.length} packages have`;
    expect(contributing).toContain(
      `npm warn install-scripts ${count} install scripts not yet covered by allowScripts:`,
    );
    for (const { name, version } of scripted) {
      const own = (JSON.parse(read(`node_modules/${name}/package.json`)) as { scripts: Record<string, string> })
        .scripts;
      const events = ['preinstall', 'install', 'postinstall']
        .filter((e) => own[e])
        .map((e) => `${e}: ${own[e]}`)
        .join('; ');
      expect(contributing).toContain(`npm warn install-scripts   ${name}@${version} (${events})`);
    }
  });

  it('names the toolchain better-sqlite3 compiles with when no prebuilt binary can be had', () => {
    expect(contributing).toMatch(/`better-sqlite3`[\s\S]{0,400}`python3`, `make` and `g\+\+`/);
  });
});

describe('docs/operations/upgrades.md', () => {
  it("shows migrate's output with the schema versions of this release, on each engine", () => {
    const ops = read('docs/operations/upgrades.md');
    const newest = (list: { version: number }[]) => Math.max(...list.map((m) => m.version));
    const postgres = newest(postgresMigrations);
    const sqlite = newest(sqliteMigrations);
    expect(ops).toContain(`On PostgreSQL, whose list is at version ${postgres} in this`);
    expect(ops).toContain(`Applied migration(s) ${postgres}; the schema is at version ${postgres}.`);
    expect(ops).toContain(`The schema is up to date at version ${postgres}.`);
    expect(ops).toContain(`{"engine": "postgres", "version": ${postgres}, "applied": []}`);
    expect(ops).toMatch(
      new RegExp(
        `SQLite's own list, at version ${sqlite} in\\s+this release: a new file prints \`Applied migration\\(s\\) 1, 2, 3, …, ${sqlite}; the schema is at version ${sqlite}\\.\``,
      ),
    );
  });
});
