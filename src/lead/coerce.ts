// Coercion of an incoming answer value into a typed field value, or an error a bot author understands.
import type { CustomField, FieldOption } from '../rules/catalog.js';
import type { FieldData } from '../store/repos/field-values.js';

export type Coerced = { ok: true; data: FieldData } | { ok: false; error: string };

const EMPTY: FieldData = {
  text: null,
  decimal: null,
  bool: null,
  date: null,
  datetime: null,
  optionId: null,
  optionIds: [],
};
const ok = (data: Partial<FieldData>): Coerced => ({ ok: true, data: { ...EMPTY, ...data } });
const fail = (error: string): Coerced => ({ ok: false, error });

const TEXT_MAX = 10_000;
const BUILTIN_BOOLEANS = new Map<string, boolean>([
  ['true', true],
  ['false', false],
  ['yes', true],
  ['no', false],
  ['1', true],
  ['0', false],
]);

/**
 * A JSON number that a JavaScript number does not hold exactly (beyond 2^53, or rounded, or out of
 * range: 1e400 becomes Infinity, 1e-400 becomes 0) is refused rather than stored rounded. The JSON
 * parser notes such numbers from the request text (json-body.ts); the value check here catches the
 * ones it cannot have seen.
 */
export const inexactNumberError = (name: string): string =>
  `${name}: this number cannot be carried exactly as a JSON number; send it as a string, e.g. "12345678901234567890"`;

/** How a value is quoted in an error: strings in quotes, the rest as JSON. */
const show = (raw: unknown): string =>
  typeof raw === 'string' ? `'${raw.length > 60 ? `${raw.slice(0, 57)}...` : raw}'` : JSON.stringify(raw);

/** `+007.50` -> `7.5`; decimals are carried as strings so no precision is lost. */
function canonicalDecimal(text: string): string | null {
  const m = /^([+-]?)(\d+)(?:\.(\d+))?$/.exec(text.trim());
  if (!m) return null;
  const int = m[2]!.replace(/^0+(?=\d)/, '');
  const frac = (m[3] ?? '').replace(/0+$/, '');
  const sign = m[1] === '-' && (int !== '0' || frac !== '') ? '-' : '';
  return `${sign}${int}${frac ? `.${frac}` : ''}`;
}

function isCalendarDate(text: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.toISOString().slice(0, 10) === text;
}

const DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

function findOption(field: CustomField, values: Map<string, string | boolean>, item: string): FieldOption | undefined {
  const mapped = values.get(item.toLowerCase());
  const label = (typeof mapped === 'string' ? mapped : item).toLowerCase();
  return field.options.find((o) => o.label.toLowerCase() === label);
}

const optionList = (field: CustomField) => field.options.map((o) => o.label).join(', ');

/**
 * Values arrive as strings, booleans or numbers (docs/api.md, "Values"); anything else is invalid. A value map
 * (from the integration's mapping) is consulted first for boolean and choice fields, case-insensitively.
 */
export function coerce(field: CustomField, raw: unknown, values: Map<string, string | boolean> = new Map()): Coerced {
  if (typeof raw !== 'string' && typeof raw !== 'boolean' && typeof raw !== 'number') {
    return fail(
      `${field.name} takes a string, a boolean or a number, not ${raw === null ? 'null' : Array.isArray(raw) ? 'a list' : typeof raw}`,
    );
  }
  if (typeof raw === 'number' && (!Number.isFinite(raw) || (Number.isInteger(raw) && !Number.isSafeInteger(raw)))) {
    return fail(inexactNumberError(field.name));
  }
  const text = String(raw).trim();

  switch (field.type) {
    case 'text':
      if (typeof raw === 'boolean') return fail(`${field.name} is a text field; send the text, not ${raw}`);
      if (text === '') return fail(`${field.name} is a text field; an empty text is not an answer`);
      if (text.length > TEXT_MAX) return fail(`${field.name} takes at most ${TEXT_MAX} characters`);
      return ok({ text });
    case 'number': {
      const decimal = typeof raw === 'boolean' ? null : canonicalDecimal(typeof raw === 'number' ? String(raw) : text);
      return decimal === null
        ? fail(`${show(raw)} is not a number for ${field.name}; send digits like 42 or 42.5`)
        : ok({ decimal });
    }
    case 'boolean': {
      if (typeof raw === 'boolean') return ok({ bool: raw });
      const mapped = values.get(text.toLowerCase());
      const bool = typeof mapped === 'boolean' ? mapped : BUILTIN_BOOLEANS.get(text.toLowerCase());
      return bool === undefined
        ? fail(`${show(raw)} is not a yes/no value for ${field.name}; send true or false`)
        : ok({ bool });
    }
    case 'date':
      return typeof raw === 'string' && isCalendarDate(text)
        ? ok({ date: text })
        : fail(`${show(raw)} is not a date for ${field.name}; send YYYY-MM-DD, e.g. 2026-03-15`);
    case 'datetime':
      if (typeof raw !== 'string' || !DATETIME.test(text) || Number.isNaN(Date.parse(text))) {
        return fail(
          `${show(raw)} is not a date-time with a time zone for ${field.name}; send e.g. 2026-03-15T14:30:00+05:00`,
        );
      }
      return ok({ datetime: new Date(text).toISOString() });
    case 'single_choice': {
      const option = findOption(field, values, text);
      return option
        ? ok({ optionId: option.id })
        : fail(`${show(raw)} is not an option of ${field.name}; options: ${optionList(field)}`);
    }
    case 'multiple_choice': {
      const items = text
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '');
      const chosen = new Set<FieldOption>();
      for (const item of items) {
        const option = findOption(field, values, item);
        if (!option) return fail(`${show(item)} is not an option of ${field.name}; options: ${optionList(field)}`);
        chosen.add(option);
      }
      if (chosen.size === 0) return fail(`${field.name} needs at least one option; options: ${optionList(field)}`);
      return ok({ optionIds: [...chosen].sort((a, b) => a.order - b.order).map((o) => o.id) });
    }
  }
}

/** Two values of one field are the same when every typed member is. */
export function sameData(a: FieldData, b: FieldData): boolean {
  return (
    a.text === b.text &&
    a.decimal === b.decimal &&
    a.bool === b.bool &&
    a.date === b.date &&
    a.datetime === b.datetime &&
    a.optionId === b.optionId &&
    a.optionIds.join(',') === b.optionIds.join(',')
  );
}
