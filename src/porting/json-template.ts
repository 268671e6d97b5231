// A JSON body with placeholders as the guide writes it in its examples: JSON text, but for the number
// placeholders (`<number>`, `<number-id>`), written without quotes. Filled in as the placeholders'
// legend says (a number in their place), the text is the JSON of the legacy call's own types.
import { NUMBER_PLACEHOLDERS } from './redact.js';

/** `value` as JSON text, indented by `indent` spaces a level (0: one line), number placeholders bare. */
export function templateJson(value: unknown, indent = 0, depth = 0): string {
  if (NUMBER_PLACEHOLDERS.has(value)) return value as string;
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  const array = Array.isArray(value);
  const items = array
    ? value.map((v: unknown) => templateJson(v, indent, depth + 1))
    : Object.entries(value).map(
        ([k, v]) => `${JSON.stringify(k)}:${indent > 0 ? ' ' : ''}${templateJson(v, indent, depth + 1)}`,
      );
  const [open, close] = array ? ['[', ']'] : ['{', '}'];
  if (items.length === 0) return open + close;
  if (indent === 0) return open + items.join(',') + close;
  const pad = (level: number) => '\n' + ' '.repeat(indent * level);
  return open + items.map((item) => pad(depth + 1) + item).join(',') + pad(depth) + close;
}
