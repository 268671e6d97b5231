// Rules: the example rules load with stable ids; broken files are refused, naming file and path.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RulesError, createRulesHolder, loadRules } from '../../src/rules/loader.js';
import { stableId } from '../../src/rules/ids.js';
import { EXAMPLE_RULES } from '../helper.js';
import { builtMain } from '../support/child-gateway.js';

const fixture = (name: string) => join(import.meta.dirname, '..', 'fixtures', name);
const problemsOf = (dir: string): string[] => {
  try {
    loadRules(dir);
  } catch (error) {
    if (error instanceof RulesError) return error.problems;
    throw error;
  }
  throw new Error('rules loaded');
};

describe('example rules', () => {
  it('load, with the ids every machine computes', () => {
    const rules = loadRules(EXAMPLE_RULES);
    const bot = rules.findIntegration('brightpath:telegram-bot')!;
    expect(bot.id).toBe(rules.findIntegration(bot.id)!.id);
    // Pinned: if this changes, every stored id in every deployment changes with it.
    expect(stableId('brightpath', 'stage', 'Admissions', 'New inquiry')).toBe('54ba4b35-5696-57fc-9ec0-f36d59da20d1');
    expect(bot.defaults.stageId).toBe('54ba4b35-5696-57fc-9ec0-f36d59da20d1');
    expect(loadRules(EXAMPLE_RULES).findIntegration('brightpath:telegram-bot')!.defaults).toEqual(bot.defaults);
    const fields = [...bot.workspace.fields.values()].map((f) => f.type);
    expect(new Set(fields)).toEqual(
      new Set(['text', 'number', 'boolean', 'date', 'datetime', 'single_choice', 'multiple_choice']),
    );
  });
});

describe('broken rules', () => {
  it('name the file and the path of a bad reference', () => {
    const problems = problemsOf(fixture('rules-broken-reference'));
    expect(problems).toEqual([
      expect.stringMatching(
        /school\.yaml: integrations\[0\]\.lead_defaults\.stage: no stage "Nowhere" on board "Admissions"/,
      ),
    ]);
  });

  it('name the file and line of a YAML syntax error', () => {
    expect(problemsOf(fixture('rules-broken-yaml'))[0]).toMatch(/school\.yaml: line \d+:/);
  });

  it('report every problem of every file at once', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rules-'));
    cpSync(fixture('rules-broken-reference'), dir, { recursive: true });
    writeFileSync(
      join(dir, 'other.yaml'),
      'format_version: 2\nworkspace:\n  slug: Bad Slug\n  name: X\n  boards: []\n  statuses: [{name: A, color: red}]\n',
    );
    const problems = problemsOf(dir).join('\n');
    expect(problems).toMatch(/other\.yaml: format_version: must be 1/);
    expect(problems).toMatch(/other\.yaml: workspace\.slug: must be lower-case/);
    expect(problems).toMatch(/other\.yaml: workspace\.boards: a workspace needs at least one board/);
    expect(problems).toMatch(/other\.yaml: workspace\.statuses\[0\]\.color: must be a colour/);
    expect(problems).toMatch(/school\.yaml: integrations\[0\]\.lead_defaults\.stage/);
  });

  it('refuse two files for one workspace', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rules-'));
    cpSync(join(EXAMPLE_RULES, 'smile-dental.yaml'), join(dir, 'a.yaml'));
    cpSync(join(EXAMPLE_RULES, 'smile-dental.yaml'), join(dir, 'b.yaml'));
    expect(problemsOf(dir)).toEqual([
      expect.stringMatching(/b\.yaml: workspace\.slug: "smile-dental" is already used by .*a\.yaml/),
    ]);
  });

  it('a bad reload keeps the previous rules and says why', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rules-'));
    cpSync(join(EXAMPLE_RULES, 'smile-dental.yaml'), join(dir, 'dental.yaml'));
    const holder = createRulesHolder(dir);
    const before = holder.current();
    writeFileSync(join(dir, 'dental.yaml'), 'format_version: 1\n');
    const result = holder.reload();
    expect(result).toEqual({ ok: false, problems: [expect.stringMatching(/dental\.yaml: workspace: /)] });
    expect(holder.current()).toBe(before);
  });
});

describe('rules that name JavaScript object internals', () => {
  // Regression: `field: toString` passed (found on Object.prototype) and every answer then gave a 500;
  // an answer key `__proto__` vanished without a word.
  const withMapping = (mapping: string) => {
    const dir = mkdtempSync(join(tmpdir(), 'rules-'));
    const text = readFileSync(join(EXAMPLE_RULES, 'brightpath.yaml'), 'utf8');
    writeFileSync(join(dir, 'bright.yaml'), text.replace(/^( {4}answers:\n)/m, `$1${mapping}`));
    return dir;
  };

  it.each(['toString', '__proto__', 'constructor', 'hasOwnProperty', 'no_such_field'])(
    'refuse a mapping to field %s, naming file and path',
    (field) => {
      const problems = problemsOf(withMapping(`      probe:\n        field: ${field}\n`));
      expect(problems).toEqual([
        expect.stringMatching(
          new RegExp(`bright\\.yaml: integrations\\[0\\]\\.answers\\.probe\\.field: no custom field "${field}"`),
        ),
      ]);
    },
  );

  it.each(['__proto__', 'constructor', 'prototype'])('refuse an answer key named %s', (key) => {
    const problems = problemsOf(withMapping(`      ${key}:\n        field: laptop\n`));
    expect(problems).toEqual([
      expect.stringMatching(
        new RegExp(`bright\\.yaml: integrations\\[0\\]\\.answers\\.${key}: "${key}" cannot be used as a name`),
      ),
    ]);
  });

  it('a reload to such a mapping keeps the previous rules', () => {
    const dir = withMapping('');
    const holder = createRulesHolder(dir);
    const before = holder.current();
    writeFileSync(
      join(dir, 'bright.yaml'),
      readFileSync(join(withMapping('      probe:\n        field: toString\n'), 'bright.yaml')),
    );
    expect(holder.reload()).toEqual({
      ok: false,
      problems: [expect.stringMatching(/answers\.probe\.field: no custom field "toString"/)],
    });
    expect(holder.current()).toBe(before);
  });
});

describe('the server on broken rules', () => {
  it('refuses to start, naming the file and the path', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-start-'));
    const run = spawnSync(process.execPath, [builtMain(), '--demo'], {
      cwd: join(import.meta.dirname, '..', '..'),
      env: {
        ...process.env,
        RULES_DIR: fixture('rules-broken-reference'),
        DATABASE_PATH: join(dir, 'g.db'),
        PORT: '0',
      },
      encoding: 'utf8',
      timeout: 15_000,
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(
      /rules-broken-reference\/school\.yaml: integrations\[0\]\.lead_defaults\.stage: no stage "Nowhere"/,
    );
  });
});
