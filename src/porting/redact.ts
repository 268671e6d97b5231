// A legacy call kept for the porting guide, redacted as it is captured: what a person typed or is
// becomes a typed placeholder, what the integration's rules configure stays (docs/migration.md,
// "The porting guide"). The raw body is never held past this function.
import type { Integration } from '../rules/catalog.js';

/** A redacted sample's JSON text at most; a larger one keeps its first members and a marker. */
export const SAMPLE_MAX_BYTES = 8 * 1_024;
/** Members of one object and items of one array kept; the rest are dropped behind a marker. */
export const SAMPLE_MAX_MEMBERS = 50;
/** Nesting kept; deeper values become `<value>`. */
export const SAMPLE_MAX_DEPTH = 4;
/** Member names are cut to this length. */
export const SAMPLE_NAME_MAX_CHARS = 64;
/** The marker member of a cut object, and the last item of a cut array. */
export const TRUNCATED = '<truncated>';

/** The placeholders a redacted sample holds; the guide's v1 examples use the same. */
export const PLACEHOLDERS = ['<name>', '<phone>', '<email>', '<text>', '<id>', '<number>', '<source>', '<value>'] as const;

export interface LegacyCall {
  method: string;
  /** The route as registered, e.g. `/api/bots/api/leads/:id/`. */
  routeUrl: string;
  query: Record<string, unknown> | null;
  body: unknown;
  status: number;
}

export interface RedactedCall {
  method: string;
  /** The route's path with each parameter as `<id>`. */
  path: string;
  /** Parameter names kept, values as `<value>`. */
  query: Record<string, string>;
  body: unknown;
  status: number;
  truncated: boolean;
}

/** Members whose value is a person's name, contact or own words, whatever its form. */
const BY_NAME: Record<string, string> = {
  first_name: '<name>',
  last_name: '<name>',
  middle_name: '<name>',
  full_name: '<name>',
  phone: '<phone>',
  email: '<email>',
  notes: '<text>',
  text: '<text>',
  comment: '<text>',
  description: '<text>',
  source: '<source>',
};

/** Members that hold the workspace's own ids (its catalog: tags, stages, statuses, groups, users): configuration, kept. */
const CATALOG_IDS = new Set(['tag_ids', 'stage', 'stage_id', 'status', 'status_id', 'group', 'group_id', 'assigned_to', 'board', 'board_id']);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const EMAIL = /@/;
const DIGITS = /^\s*\d+\s*$/;
const DECIMAL = /^\s*-?\d+(?:[.,]\d+)?\s*$/;
const PHONE = /^\s*\+?[\d\s().-]+$/;

/** The placeholder of a value nothing else tells about: its kind, from its form. */
export function placeholderOf(value: unknown): unknown {
  if (value === null || typeof value === 'boolean') return value;
  if (typeof value === 'number' || typeof value === 'bigint') return '<number>';
  if (typeof value !== 'string') return '<value>';
  if (EMAIL.test(value)) return '<email>';
  if (DIGITS.test(value)) return value.replace(/\D/g, '').length >= 9 ? '<phone>' : '<id>';
  if (DECIMAL.test(value)) return '<number>';
  if (PHONE.test(value) && value.replace(/\D/g, '').length >= 7) return '<phone>';
  if (UUID.test(value)) return '<id>';
  return '<text>';
}

export interface RedactionRules {
  /** `extra_data` members the person id is made of (`legacy.external_contact_id`): always `<id>`. */
  personIdMembers: ReadonlySet<string>;
  /** Per `extra_data` member, the values the integration's answer mapping lists (lower case): configuration, kept. */
  mappedValues: ReadonlyMap<string, ReadonlySet<string>>;
}

/** What the integration's rules say may stay in one of its samples. */
export function redactionRules(integration: Integration): RedactionRules {
  const personIdMembers = new Set<string>();
  for (const [, member] of (integration.legacy.externalContactId ?? '').matchAll(/\{extra_data\.([a-z_]+)\}/g)) personIdMembers.add(member!);
  const mappedValues = new Map<string, Set<string>>();
  for (const [dataKey, answerKey] of integration.legacy.data) {
    const mapping = integration.answers.get(answerKey);
    if (mapping && mapping.values.size > 0) mappedValues.set(dataKey, new Set(mapping.values.keys()));
  }
  return { personIdMembers, mappedValues };
}

const cutName = (name: string) => (name.length > SAMPLE_NAME_MAX_CHARS ? `${name.slice(0, SAMPLE_NAME_MAX_CHARS - 1)}…` : name);

/** What a member name may look like to be kept as it is: an identifier, as a field's name is. */
const PLAIN_NAME = /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/;

/**
 * A member name as the sample keeps it: a plain identifier (`goal`, `utm_source`) as sent; anything
 * else (a phone, an e-mail, a name with spaces: a bot may key its data by the person) becomes
 * `<member-N>`, N its place among the object's members.
 */
const keptName = (name: string, index: number): string => (PLAIN_NAME.test(name) && placeholderOf(name) === '<text>' ? cutName(name) : `<member-${index + 1}>`);

function redactAny(value: unknown, depth: number): unknown {
  if (value === null || typeof value !== 'object') return placeholderOf(value);
  if (depth >= SAMPLE_MAX_DEPTH) return '<value>';
  if (Array.isArray(value)) {
    const items = value.slice(0, SAMPLE_MAX_MEMBERS).map((v) => redactAny(v, depth + 1));
    return value.length > SAMPLE_MAX_MEMBERS ? [...items, TRUNCATED] : items;
  }
  const out: Record<string, unknown> = {};
  const entries = Object.entries(value);
  entries.slice(0, SAMPLE_MAX_MEMBERS).forEach(([name, v], i) => (out[keptName(name, i)] = redactAny(v, depth + 1)));
  if (entries.length > SAMPLE_MAX_MEMBERS) out[TRUNCATED] = true;
  return out;
}

function redactExtraData(data: Record<string, unknown>, rules: RedactionRules): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const entries = Object.entries(data);
  entries.slice(0, SAMPLE_MAX_MEMBERS).forEach(([name, v], i) => {
    // The members the rules name are configuration: kept by name whatever they look like.
    const named = rules.personIdMembers.has(name) || rules.mappedValues.has(name);
    const key = named ? cutName(name) : keptName(name, i);
    if (rules.personIdMembers.has(name)) out[key] = '<id>';
    else if (typeof v === 'string' && rules.mappedValues.get(name)?.has(v.toLowerCase())) out[key] = v;
    else out[key] = redactAny(v, 2);
  });
  if (entries.length > SAMPLE_MAX_MEMBERS) out[TRUNCATED] = true;
  return out;
}

const catalogId = (v: unknown) => (typeof v === 'string' && UUID.test(v) ? v : placeholderOf(v));

function redactBody(body: unknown, rules: RedactionRules): unknown {
  if (body === null || body === undefined) return null;
  // A body no parser read (a forwarded stream, raw bytes) shows nothing of itself.
  if (Buffer.isBuffer(body) || ArrayBuffer.isView(body) || typeof (body as { pipe?: unknown }).pipe === 'function') return '<value>';
  if (typeof body !== 'object' || Array.isArray(body)) return redactAny(body, 0);
  const out: Record<string, unknown> = {};
  const entries = Object.entries(body as Record<string, unknown>);
  for (const [i, [name, v]] of entries.slice(0, SAMPLE_MAX_MEMBERS).entries()) {
    const key = keptName(name, i);
    if (name in BY_NAME) out[key] = v === null ? null : BY_NAME[name];
    else if (name === 'extra_data' && v !== null && typeof v === 'object' && !Array.isArray(v)) out[key] = redactExtraData(v as Record<string, unknown>, rules);
    else if (CATALOG_IDS.has(name)) out[key] = Array.isArray(v) ? v.slice(0, SAMPLE_MAX_MEMBERS).map(catalogId) : catalogId(v);
    else out[key] = redactAny(v, 1);
  }
  if (entries.length > SAMPLE_MAX_MEMBERS) out[TRUNCATED] = true;
  return out;
}

/** Drops an object's last members until its text fits SAMPLE_MAX_BYTES, marking it; anything else that does not fit becomes the marker. */
function bounded(body: unknown): { body: unknown; truncated: boolean } {
  if (Buffer.byteLength(JSON.stringify(body)) <= SAMPLE_MAX_BYTES) return { body, truncated: false };
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return { body: TRUNCATED, truncated: true };
  const entries = Object.entries(body).filter(([k]) => k !== TRUNCATED);
  while (entries.length > 0) {
    entries.pop();
    const candidate = { ...Object.fromEntries(entries), [TRUNCATED]: true };
    if (Buffer.byteLength(JSON.stringify(candidate)) <= SAMPLE_MAX_BYTES) return { body: candidate, truncated: true };
  }
  return { body: { [TRUNCATED]: true }, truncated: true };
}

/** The call as the porting guide keeps it: placeholders for what is personal, at most SAMPLE_MAX_BYTES. */
export function redactLegacyCall(call: LegacyCall, rules: RedactionRules): RedactedCall {
  const path = call.routeUrl.replace(/:[a-z_]+/gi, '<id>');
  const query: Record<string, string> = {};
  Object.keys(call.query ?? {}).slice(0, SAMPLE_MAX_MEMBERS).forEach((name, i) => (query[keptName(name, i)] = '<value>'));
  const { body, truncated } = bounded(redactBody(call.body, rules));
  return { method: call.method, path, query, body, status: call.status, truncated };
}
