// The YAML snippet the console shows for an unmapped answer key: for any key a bot may send (quotes,
// colons, other scripts, digits first), both parts parse and, added to the rules, pass the schema.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { EXAMPLE_RULES } from '../helper.js';
import { RulesFileSchema } from '../../src/rules/schema.js';
import { buildRules } from '../../src/rules/catalog.js';
import { exampleText, fieldKeyFor, guessFieldType, mappingSnippet } from '../../src/answers/unmapped.js';

const source = () => parse(readFileSync(join(EXAMPLE_RULES, 'brightpath.yaml'), 'utf8'));
const integration = () => buildRules([RulesFileSchema.parse(source())]).findIntegration('brightpath:telegram-bot')!;

describe('the mapping snippet of an unmapped answer key', () => {
  it.each([
    ['english_level', ['B2'], 'english_level', 'text'],
    ['Lesson count', [3, '4'], 'lesson_count', 'number'],
    ['start: "date"', ['2026-12-01'], 'start_date', 'date'],
    ['called-at', ['2026-12-01T10:00:00Z'], 'called_at', 'datetime'],
    ['has_car', [true, false], 'has_car', 'boolean'],
    ['1st choice', ['a', 2], 'answer_1st_choice', 'text'],
    ['уровень', ['B1'], 'answer', 'text'],
    ['k'.repeat(100), [], 'k'.repeat(64), 'text'],
  ])('%j: a field %s of type %s, and both parts pass the rules schema', (key, examples, fieldKey, type) => {
    const snippet = mappingSnippet(integration(), key, examples);
    expect(snippet.guessedType).toBe(type);
    const rules = source();
    Object.assign(rules.workspace.custom_fields, parse(snippet.field!).custom_fields);
    Object.assign(
      rules.integrations.find((i: { slug: string }) => i.slug === 'telegram-bot').answers,
      parse(snippet.answers).answers,
    );
    const checked = RulesFileSchema.safeParse(rules);
    expect(checked.success, JSON.stringify(checked.error?.issues)).toBe(true);
    expect(Object.keys(parse(snippet.field!).custom_fields)).toEqual([fieldKey]);
    expect(parse(snippet.answers).answers[key]).toEqual({ field: fieldKey });
  });

  it('maps to the workspace field of the same key when there is one, proposing no new field', () => {
    const snippet = mappingSnippet(integration(), 'trial_date', ['2026-12-01']);
    expect(snippet.field).toBeNull();
    expect(snippet.guessedType).toBeNull();
    expect(parse(snippet.answers)).toEqual({ answers: { trial_date: { field: 'trial_date' } } });
  });

  it('guesses text when the examples disagree or there are none, and never a choice', () => {
    expect(guessFieldType([])).toBe('text');
    expect(guessFieldType(['yes', 'no'])).toBe('text');
    expect(guessFieldType([1, 'one'])).toBe('text');
    expect(guessFieldType([['a', 'b']])).toBe('text');
    expect(fieldKeyFor('__')).toBe('answer');
  });

  it('shows a value as text, JSON for anything but a string, cut with an ellipsis', () => {
    expect(exampleText('B2')).toBe('B2');
    expect(exampleText(['Monday', 'Friday'])).toBe('["Monday","Friday"]');
    expect(exampleText('x'.repeat(200))).toHaveLength(80);
  });
});
