// A legacy lead's person id made inside a SQLite statement, as src/lead/external-id.ts makes it: the
// unlinked legacy leads of a page of ids are found without reading the others into the process.
import type { PersonIdMember, PersonIdTemplate } from '../../repos/leads.js';
import { ARRAY_LENGTH, TRIMMED_CHARACTERS } from '../../person-id.js';

/** A JSON path of SQLite, every key quoted. */
const jsonPath = (keys: readonly string[]) => `$${keys.map((k) => `."${k}"`).join('')}`;

/**
 * One member's text, or NULL: a string trimmed of @trimmed (as JavaScript trims), a number as the JSON
 * text holds it (written by JSON.stringify, so as String(number) writes it), anything else NULL.
 */
function memberSql(member: PersonIdMember, i: number, params: Record<string, unknown>): string {
  if ('column' in member) return `NULLIF(trim(l.${member.column}, @trimmed), '')`;
  params[`path${i}`] = jsonPath(member.extraData);
  const at = `@path${i}`;
  const value = `CASE json_type(l.extra_data, ${at}) WHEN 'text' THEN NULLIF(trim(json_extract(l.extra_data, ${at}), @trimmed), '')
    WHEN 'integer' THEN l.extra_data -> ${at} WHEN 'real' THEN l.extra_data -> ${at} END`;
  if (member.extraData.at(-1) !== ARRAY_LENGTH) return value;
  params[`parent${i}`] = jsonPath(member.extraData.slice(0, -1));
  return `CASE WHEN json_type(l.extra_data, @parent${i}) = 'array' THEN CAST(json_array_length(l.extra_data, @parent${i}) AS TEXT) ELSE ${value} END`;
}

/**
 * The SELECT of the unlinked legacy leads whose id is one of @ids (a JSON array), and its parameters
 * but for @integrationId and @ids. Its text depends on the template's shape alone, its text and paths
 * being parameters: one statement per shape.
 */
export function unlinkedLegacyOfQuery(template: PersonIdTemplate): { text: string; params: Record<string, unknown> } {
  const params: Record<string, unknown> = { trimmed: TRIMMED_CHARACTERS };
  const parts = template.literals.map((literal, i) => {
    params[`text${i}`] = literal;
    const member = template.members[i];
    return member === undefined ? `@text${i}` : `@text${i} || ${memberSql(member, i, params)}`;
  });
  const text = `SELECT l.* FROM leads l WHERE l.integration_id = @integrationId AND l.origin = 'legacy' AND l.deleted_at IS NULL
       AND (${parts.join(' || ')}) IN (SELECT value FROM json_each(@ids))
       AND NOT EXISTS (SELECT 1 FROM contact_bindings b WHERE b.integration_id = l.integration_id AND b.contact_id = l.contact_id)
     ORDER BY l.created_at, l.rowid`;
  return { text, params };
}
