// A legacy lead's person id made inside a PostgreSQL statement, as src/lead/external-id.ts makes it: the
// unlinked legacy leads of a page of ids are found without reading the others into the process.
import type { PersonIdMember, PersonIdTemplate } from '../../repos/leads.js';
import { ARRAY_LENGTH, TRIMMED_CHARACTERS } from '../../person-id.js';

/**
 * A jsonb number as String(number) writes the double the driver parses it into. JSON.stringify wrote it,
 * so within 1e-6 to 1e21 its shortest digits are the numeric's own (trim_scale drops a scale the text
 * may carry); outside, JavaScript writes an exponent, as float8's shortest output does, less the
 * exponent's leading zero (1e-07 there, 1e-7 in JavaScript). Beyond the largest double: no id.
 */
const jsNumber = (n: string) =>
  `CASE WHEN abs(${n}) > 1.7976931348623157e308 THEN NULL
    WHEN abs(${n}) >= 1e21 OR (${n} <> 0 AND abs(${n}) < 1e-6) THEN regexp_replace(${n}::float8::text, 'e([+-])0', 'e\\1')
    ELSE trim_scale(${n})::text END`;

/** One member's text, or NULL: a string trimmed as JavaScript trims, a number as JavaScript writes it, anything else NULL. */
function memberSql(member: PersonIdMember, param: (value: unknown) => string, trimmed: string): string {
  if ('column' in member) return `NULLIF(btrim(l.${member.column}, ${trimmed}), '')`;
  const value = `(l.extra_data #> ${param(member.extraData)}::text[])`;
  const text = `CASE jsonb_typeof(${value}) WHEN 'string' THEN NULLIF(btrim(${value} #>> '{}', ${trimmed}), '')
    WHEN 'number' THEN ${jsNumber(`(${value})::numeric`)} END`;
  if (member.extraData.at(-1) !== ARRAY_LENGTH) return text;
  const parent = `(l.extra_data #> ${param(member.extraData.slice(0, -1))}::text[])`;
  return `CASE WHEN jsonb_typeof(${parent}) = 'array' THEN jsonb_array_length(${parent})::text ELSE ${text} END`;
}

// Marked and kept so by triggers (migration 22): read by their own index, past the linked ones.
const UNLINKED = 'FROM leads WHERE integration_id = $1 AND unlinked_legacy AND deleted_at IS NULL';

/** The unlinked legacy leads of an integration, the oldest first, so many; and their count up to a maximum. */
export const UNLINKED_LEGACY = {
  list: `SELECT * ${UNLINKED} ORDER BY created_at, id LIMIT $2`,
  count: `SELECT count(*)::int AS n FROM (SELECT 1 ${UNLINKED} LIMIT $2) u`,
};

/**
 * The SELECT of the unlinked legacy leads of $1 whose id is one of $2 (a text array), among the oldest $3
 * of them, with its values from $4 on. Its text depends on the template's shape alone, its text and
 * paths being parameters.
 */
export function unlinkedLegacyOfQuery(template: PersonIdTemplate): { text: string; values: unknown[] } {
  const values: unknown[] = [];
  const param = (value: unknown) => `$${values.push(value) + 3}`;
  // A parameter is sent only if the text names it: PostgreSQL types each from where it is used.
  let trimmed: string | null = null;
  const parts = template.literals.map((literal, i) => {
    const member = template.members[i];
    const text = `${param(literal)}::text`;
    return member === undefined
      ? text
      : `${text} || ${memberSql(member, param, (trimmed ??= `${param(TRIMMED_CHARACTERS)}::text`))}`;
  });
  const text = `SELECT l.* FROM (SELECT * FROM leads WHERE integration_id = $1 AND unlinked_legacy AND deleted_at IS NULL
       ORDER BY created_at, id LIMIT $3) l
     WHERE (${parts.join(' || ')}) COLLATE "C" = ANY($2::text[])
     ORDER BY l.created_at, l.id`;
  return { text, values };
}
