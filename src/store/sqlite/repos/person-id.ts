// A legacy lead's person id made inside a SQLite statement, as src/lead/external-id.ts makes it: the
// unlinked legacy leads of a page of ids are found without reading the others into the process.
import type { PersonIdMember, PersonIdTemplate } from '../../repos/leads.js';
import { ARRAY_LENGTH, TRIMMED_CHARACTERS } from '../../person-id.js';

// Marked and kept so by triggers (migration 24): read by their own index, past the linked ones.
const UNLINKED = 'FROM leads WHERE integration_id = ? AND unlinked_legacy = 1 AND deleted_at IS NULL';

/** The unlinked legacy leads of an integration, the oldest first, so many; and their count up to a maximum. */
export const UNLINKED_LEGACY = {
  list: `SELECT * ${UNLINKED} ORDER BY created_at, id LIMIT ?`,
  count: `SELECT count(*) AS n FROM (SELECT 1 ${UNLINKED} LIMIT ?)`,
};

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
 * The SELECT of the unlinked legacy leads whose id is one of @ids (a JSON array), among the oldest
 * @examined of them, and its parameters but for @integrationId, @examined and @ids. Its text depends on the template's shape alone, its text and paths
 * being parameters: one statement per shape.
 */
export function unlinkedLegacyOfQuery(template: PersonIdTemplate): { text: string; params: Record<string, unknown> } {
  const params: Record<string, unknown> = { trimmed: TRIMMED_CHARACTERS };
  const parts = template.literals.map((literal, i) => {
    params[`text${i}`] = literal;
    const member = template.members[i];
    return member === undefined ? `@text${i}` : `@text${i} || ${memberSql(member, i, params)}`;
  });
  const text = `SELECT l.* FROM (SELECT * FROM leads WHERE integration_id = @integrationId AND unlinked_legacy = 1 AND deleted_at IS NULL
       ORDER BY created_at, id LIMIT @examined) l
     WHERE (${parts.join(' || ')}) IN (SELECT value FROM json_each(@ids))
     ORDER BY l.created_at, l.id`;
  return { text, params };
}
