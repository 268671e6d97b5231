// Reads rules/*.yaml, validates every file, and reports each problem with its file and path.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { RulesFileSchema, type RulesFile } from './schema.js';
import { buildRules, type Rules } from './catalog.js';

export class RulesError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid rules:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'RulesError';
  }
}

/** `['integrations', 0, 'lead_defaults', 'stage']` -> `integrations[0].lead_defaults.stage` */
export const formatPath = (path: readonly PropertyKey[]): string =>
  path.reduce<string>(
    (out, part) => (typeof part === 'number' ? `${out}[${part}]` : out ? `${out}.${String(part)}` : String(part)),
    '',
  ) || '(top level)';

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** Paths of members named like JavaScript's object internals, anywhere in a parsed file. */
function forbiddenKeyPaths(
  value: unknown,
  path: (string | number)[] = [],
  out: (string | number)[][] = [],
): (string | number)[][] {
  if (Array.isArray(value)) value.forEach((item, i) => forbiddenKeyPaths(item, [...path, i], out));
  else if (value !== null && typeof value === 'object') {
    for (const key of Object.keys(value)) {
      if (FORBIDDEN_KEYS.has(key)) out.push([...path, key]);
      else forbiddenKeyPaths((value as Record<string, unknown>)[key], [...path, key], out);
    }
  }
  return out;
}

function parseFile(dir: string, name: string, problems: string[], texts: Map<string, string>): RulesFile | null {
  const label = join(dir, name);
  let text: string;
  try {
    text = readFileSync(label, 'utf8');
  } catch (error) {
    problems.push(`${label}: cannot be read (${(error as Error).message})`);
    return null;
  }
  texts.set(name, text);
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    for (const e of doc.errors)
      problems.push(`${label}: line ${e.linePos?.[0].line ?? '?'}: ${e.message.split('\n')[0]}`);
    return null;
  }
  const raw: unknown = doc.toJS();
  // zod drops a `__proto__` member without a word, so a rule named so would vanish silently.
  const forbidden = forbiddenKeyPaths(raw);
  if (forbidden.length > 0) {
    for (const path of forbidden)
      problems.push(`${label}: ${formatPath(path)}: "${String(path.at(-1))}" cannot be used as a name`);
    return null;
  }
  const result = RulesFileSchema.safeParse(raw);
  if (!result.success) {
    for (const issue of result.error.issues) problems.push(`${label}: ${formatPath(issue.path)}: ${issue.message}`);
    return null;
  }
  return result.data;
}

/** Loads and validates every `*.yaml`/`*.yml` file of `dir`; throws a RulesError naming each problem. */
export function loadRules(dir: string): Rules {
  return loadVersionedRules(dir).rules;
}

/**
 * The version of a set of rules files: the first 12 hex digits of a SHA-256 over each file's name and
 * bytes, in name order. Replicas given the same files report the same version, whatever their paths.
 */
function versionOf(texts: Map<string, string>): string {
  const hash = createHash('sha256');
  for (const name of [...texts.keys()].sort()) hash.update(`${name}\0${texts.get(name)!}\0`);
  return hash.digest('hex').slice(0, 12);
}

/** One rules file as loaded: its name in the folder, the SHA-256 of its bytes (hex) and its text. */
export interface RulesFileText {
  name: string;
  sha256: string;
  text: string;
}

const filesOf = (texts: Map<string, string>): RulesFileText[] =>
  [...texts.keys()].sort().map((name) => ({
    name,
    sha256: createHash('sha256').update(texts.get(name)!).digest('hex'),
    text: texts.get(name)!,
  }));

/**
 * Every problem of every rules file of `dir`, as a gateway would refuse them at start, without loading
 * anything else (`lead-gateway rules check`): the files read, and the version they make when clean.
 */
export function checkRules(dir: string): { files: string[]; problems: string[]; version: string | null } {
  try {
    const { version, files } = loadVersionedRules(dir);
    return { files: files.map((f) => f.name), problems: [], version };
  } catch (error) {
    if (!(error instanceof RulesError)) throw error;
    return { files: yamlNames(dir) ?? [], problems: error.problems, version: null };
  }
}

/** The `*.yaml`/`*.yml` files of `dir` in name order, or null when the folder cannot be read. */
function yamlNames(dir: string): string[] | null {
  try {
    return readdirSync(dir)
      .filter((n) => /\.ya?ml$/.test(n))
      .sort();
  } catch {
    return null;
  }
}

function loadVersionedRules(dir: string): { rules: Rules; version: string; files: RulesFileText[] } {
  const problems: string[] = [];
  let names: string[];
  try {
    names = readdirSync(dir)
      .filter((n) => /\.ya?ml$/.test(n))
      .sort();
  } catch (error) {
    throw new RulesError([`${dir}: cannot be read (${(error as Error).message})`]);
  }
  if (names.length === 0) throw new RulesError([`${dir}: holds no *.yaml rules file`]);
  const files: { name: string; file: RulesFile }[] = [];
  const texts = new Map<string, string>();
  for (const name of names) {
    const file = parseFile(dir, name, problems, texts);
    if (file) files.push({ name, file });
  }
  const seen = new Map<string, string>();
  for (const { name, file } of files) {
    const other = seen.get(file.workspace.slug);
    if (other)
      problems.push(
        `${join(dir, name)}: workspace.slug: "${file.workspace.slug}" is already used by ${join(dir, other)}`,
      );
    seen.set(file.workspace.slug, name);
  }
  if (problems.length > 0) throw new RulesError(problems);
  return { rules: buildRules(files.map((f) => f.file)), version: versionOf(texts), files: filesOf(texts) };
}

/** Holds the current rules; a reload that fails keeps the previous rules and says why. */
export interface RulesHolder {
  current(): Rules;
  /** The version of the rules in force (see versionOf), and when they were loaded. */
  version(): { version: string; loadedAt: string };
  /** The files of the rules in force, as read when they were loaded (GET /admin/v1/rules, `rules diff`). */
  files(): readonly RulesFileText[];
  reload(): { ok: true; version: string } | { ok: false; problems: string[] };
}

export function createRulesHolder(dir: string): RulesHolder {
  let loaded = { ...loadVersionedRules(dir), loadedAt: new Date().toISOString() };
  return {
    current: () => loaded.rules,
    version: () => ({ version: loaded.version, loadedAt: loaded.loadedAt }),
    files: () => loaded.files,
    reload() {
      try {
        loaded = { ...loadVersionedRules(dir), loadedAt: new Date().toISOString() };
        return { ok: true, version: loaded.version };
      } catch (error) {
        if (error instanceof RulesError) return { ok: false, problems: error.problems };
        throw error;
      }
    },
  };
}
