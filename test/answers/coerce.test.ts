// Coercion per field type: what fits, what does not, and the message a bot author reads.
import { describe, expect, it } from 'vitest';
import { coerce } from '../../src/lead/coerce.js';
import { loadRules } from '../../src/rules/loader.js';
import { EXAMPLE_RULES } from '../helper.js';

const bot = loadRules(EXAMPLE_RULES).findIntegration('brightpath:telegram-bot')!;
const field = (key: string) => bot.workspace.fields.get(key)!;
const mapping = (key: string) => bot.answers.get(key)!;
const option = (key: string, label: string) => field(key).options.find((o) => o.label === label)!.id;

describe('coerce', () => {
  it.each([
    ['goal', 'Become a frontend developer', { text: 'Become a frontend developer' }],
    ['goal', '  trimmed  ', { text: 'trimmed' }],
    ['goal', 42, { text: '42' }],
    ['applicant_age', 19, { decimal: '19' }],
    ['applicant_age', '007.50', { decimal: '7.5' }],
    ['applicant_age', '-0', { decimal: '0' }],
    ['applicant_age', '12345678901234567890.1200', { decimal: '12345678901234567890.12' }],
    ['video_watched', true, { bool: true }],
    ['video_watched', 'YES', { bool: true }],
    ['video_watched', 0, { bool: false }],
    ['trial_date', '2026-03-15', { date: '2026-03-15' }],
    ['call_back_at', '2026-03-15T14:30:00+05:00', { datetime: '2026-03-15T09:30:00.000Z' }],
    ['call_back_at', '2026-03-15T09:30Z', { datetime: '2026-03-15T09:30:00.000Z' }],
  ])('%s accepts %j', (key, raw, expected) => {
    const result = coerce(field(key), raw);
    expect(result.ok).toBe(true);
    if (result.ok) expect(result.data).toMatchObject(expected);
  });

  it('maps a choice value through the value map: yes -> Present, ha -> Present, and labels directly', () => {
    for (const raw of ['yes', 'YES', 'ha', 'Present', 'present']) {
      expect(coerce(field('laptop'), raw, mapping('laptop').values)).toMatchObject({
        ok: true,
        data: { optionId: option('laptop', 'Present') },
      });
    }
    expect(coerce(field('laptop'), "yo'q", mapping('laptop').values)).toMatchObject({
      data: { optionId: option('laptop', 'Absent') },
    });
  });

  it('maps a boolean through the value map (ha -> true)', () => {
    expect(coerce(field('video_watched'), 'Ha', mapping('video_watched').values)).toMatchObject({
      ok: true,
      data: { bool: true },
    });
  });

  it('takes a multiple choice as comma-separated items, in option order, without repeats', () => {
    const result = coerce(field('study_days'), 'sat, mon, Monday', mapping('days').values);
    expect(result).toMatchObject({
      ok: true,
      data: { optionIds: [option('study_days', 'Monday'), option('study_days', 'Saturday')] },
    });
  });

  it.each([
    ['laptop', 'maybe', "'maybe' is not an option of Laptop; options: Present, Absent"],
    [
      'study_days',
      'mon, sun',
      "'sun' is not an option of Days that suit; options: Monday, Wednesday, Friday, Saturday",
    ],
    ['video_watched', 'maybe', "'maybe' is not a yes/no value for Intro video watched; send true or false"],
    ['applicant_age', 'nineteen', "'nineteen' is not a number for Age; send digits like 42 or 42.5"],
    ['applicant_age', true, 'true is not a number for Age; send digits like 42 or 42.5'],
    ['trial_date', '2026-02-30', "'2026-02-30' is not a date for Trial lesson date; send YYYY-MM-DD, e.g. 2026-03-15"],
    [
      'call_back_at',
      '2026-03-15T14:30:00',
      "'2026-03-15T14:30:00' is not a date-time with a time zone for Call back at; send e.g. 2026-03-15T14:30:00+05:00",
    ],
    ['goal', '', 'Learning goal is a text field; an empty text is not an answer'],
    ['goal', { a: 1 }, 'Learning goal takes a string, a boolean or a number, not object'],
    ['goal', null, 'Learning goal takes a string, a boolean or a number, not null'],
    ['goal', [1], 'Learning goal takes a string, a boolean or a number, not a list'],
  ])('%s refuses %j', (key, raw, error) => {
    const values = [...bot.answers.values()].find((m) => m.field.key === key)?.values;
    expect(coerce(field(key), raw, values)).toEqual({ ok: false, error });
  });
});
