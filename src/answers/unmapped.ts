// The answer keys a bot sends that no mapping takes yet: what the workspace owner sees of them (counts,
// a few values, the YAML that would map each one), and applying the stored ones once a mapping exists.
import { stringify } from 'yaml';
import type { Store } from '../store/store.js';
import type { Integration } from '../rules/catalog.js';
import type { FieldType } from '../rules/schema.js';
import { recordAction, type Actor } from '../migration/service.js';
import { applyStoredUnmapped, type UnmappedApplication } from './engine.js';

/** Keys listed per integration, the most frequent first; the rest are counted. */
export const UNMAPPED_KEYS_SHOWN = 100;
/** Distinct example values shown per key, the most recent first. */
export const UNMAPPED_EXAMPLES_PER_KEY = 3;
/**
 * Waiting answers counted per page view, the most recent first. The count runs on the database (on
 * SQLite, in this process): a bound keeps one page view to milliseconds however many are waiting.
 */
export const UNMAPPED_ANSWERS_SCANNED = 20_000;
/** An example value is cut to this many characters (with an ellipsis) on the page. */
export const EXAMPLE_VALUE_CHARS = 80;

export interface MappingSnippet {
  /** The custom field to add under `workspace.custom_fields`; null when the workspace has a field of that key. */
  field: string | null;
  /** The mapping to add under the integration's `answers`. */
  answers: string;
  /** The type proposed for a new field, guessed from the examples; null when the field exists. */
  guessedType: FieldType | null;
}

export interface UnmappedKeyView {
  key: string;
  count: number;
  lastSeen: string;
  examples: string[];
  snippet: MappingSnippet;
  /** The rules map this key now: its stored answers wait only to be applied. */
  mappedNow: boolean;
}

/** A value as the page shows it: strings as they are, anything else as JSON; cut to EXAMPLE_VALUE_CHARS. */
export function exampleText(raw: unknown): string {
  const text = typeof raw === 'string' ? raw : JSON.stringify(raw);
  return text.length > EXAMPLE_VALUE_CHARS ? `${text.slice(0, EXAMPLE_VALUE_CHARS - 1)}…` : text;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;
const NUMBER = /^-?\d+(\.\d+)?$/;

/**
 * A field type every example fits, from the narrowest; text otherwise. A guess from at most a few values:
 * choice fields are never guessed (their options are the owner's to name), and the page says to check it.
 */
export function guessFieldType(examples: readonly unknown[]): FieldType {
  const all = (test: (v: unknown) => boolean) => examples.length > 0 && examples.every(test);
  if (all((v) => typeof v === 'boolean')) return 'boolean';
  if (all((v) => (typeof v === 'number' && Number.isFinite(v)) || (typeof v === 'string' && NUMBER.test(v))))
    return 'number';
  if (all((v) => typeof v === 'string' && DATE.test(v))) return 'date';
  if (all((v) => typeof v === 'string' && DATETIME.test(v))) return 'datetime';
  return 'text';
}

/** A field key the rules accept (snake_case, a letter first, at most 64) made from an answer key. */
export function fieldKeyFor(answerKey: string): string {
  const snake = answerKey
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  const key = /^[a-z]/.test(snake) ? snake : `answer_${snake}`.replace(/_+$/, '');
  return key.slice(0, 64).replace(/_+$/, '');
}

/** A field's display name from its key: "english_level" -> "English level". */
const nameFor = (fieldKey: string) => {
  const words = fieldKey.replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
};

/**
 * The YAML that maps `answerKey` in the integration's rules: to the workspace's field of the same key
 * when there is one, otherwise to a new field whose type is guessed from the examples.
 */
export function mappingSnippet(
  integration: Integration,
  answerKey: string,
  examples: readonly unknown[],
): MappingSnippet {
  const fieldKey = fieldKeyFor(answerKey);
  const exists = integration.workspace.fields.has(fieldKey);
  const guessedType = exists ? null : guessFieldType(examples);
  return {
    field: exists ? null : stringify({ custom_fields: { [fieldKey]: { name: nameFor(fieldKey), type: guessedType } } }),
    answers: stringify({ answers: { [answerKey]: { field: fieldKey } } }),
    guessedType,
  };
}

/**
 * The integration's pending unmapped keys, with their snippets; bounded by UNMAPPED_KEYS_SHOWN and
 * UNMAPPED_ANSWERS_SCANNED. `notKept`: unmapped and invalid answers not stored past the caps (keep.ts).
 */
export async function unmappedAnswerKeys(
  store: Store,
  integration: Integration,
): Promise<{ keys: UnmappedKeyView[]; totalKeys: number; capped: boolean; notKept: number }> {
  const limits = { keys: UNMAPPED_KEYS_SHOWN, examples: UNMAPPED_EXAMPLES_PER_KEY, scan: UNMAPPED_ANSWERS_SCANNED };
  const { summary, notKept } = await store.snapshot(async (r) => ({
    summary: await r.answers.summarizePendingUnmapped(integration.id, limits),
    notKept: await r.answers.notKept(integration.id),
  }));
  return {
    notKept,
    totalKeys: summary.totalKeys,
    capped: summary.scanned >= UNMAPPED_ANSWERS_SCANNED,
    keys: summary.keys.map((k) => ({
      ...k,
      examples: k.examples.map(exampleText),
      snippet: mappingSnippet(integration, k.key, k.examples),
      mappedNow: integration.answers.has(k.key),
    })),
  };
}

/**
 * Applies the stored unmapped answers whose key is mapped now, and audits it under `who` in the same
 * unit: the admin API and the console both call this.
 */
export function applyStoredAnswers(store: Store, integration: Integration, who: Actor): Promise<UnmappedApplication> {
  const at = new Date().toISOString();
  return store.transact(async (tx) => {
    const report = await applyStoredUnmapped(tx, integration, at);
    const outcomes: Record<string, number> = {};
    for (const a of report.applied) outcomes[a.outcome] = (outcomes[a.outcome] ?? 0) + 1;
    await recordAction(tx, integration, 'stored_answers_applied', who, at, {
      applied: report.applied.length,
      outcomes,
      still_unmapped: report.still_unmapped,
      skipped_deleted_lead: report.skipped_deleted_lead,
      remaining: report.remaining,
    });
    return report;
  });
}
