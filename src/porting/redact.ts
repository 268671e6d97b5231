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

/** The placeholders that stand for a JSON number: the guide's examples write them without quotes. */
export const NUMBER_PLACEHOLDERS: ReadonlySet<unknown> = new Set(['<number>', '<number-id>']);

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
const CATALOG_IDS = new Set([
  'tag_ids',
  'stage',
  'stage_id',
  'status',
  'status_id',
  'group',
  'group_id',
  'assigned_to',
  'board',
  'board_id',
]);

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
  /** `extra_data` members the person id is made of (`legacy.external_contact_id`): always `<id>` (`<number-id>` for a number). */
  personIdMembers: ReadonlySet<string>;
  /** Member names the integration's rules use (`legacy.data` keys, person-id members, answer keys): configuration, kept. */
  names: ReadonlySet<string>;
  /** Per `extra_data` member, the values the integration's answer mapping lists (lower case): configuration, kept. */
  mappedValues: ReadonlyMap<string, ReadonlySet<string>>;
}

/** What the integration's rules say may stay in one of its samples. */
export function redactionRules(integration: Integration): RedactionRules {
  const personIdMembers = new Set<string>();
  for (const [, member] of (integration.legacy.externalContactId ?? '').matchAll(/\{extra_data\.([a-z_]+)\}/g))
    personIdMembers.add(member!);
  const mappedValues = new Map<string, Set<string>>();
  for (const [dataKey, answerKey] of integration.legacy.data) {
    const mapping = integration.answers.get(answerKey);
    if (mapping && mapping.values.size > 0) mappedValues.set(dataKey, new Set(mapping.values.keys()));
  }
  const names = new Set([...personIdMembers, ...integration.legacy.data.keys(), ...integration.answers.keys()]);
  return { personIdMembers, names, mappedValues };
}

const cutName = (name: string) =>
  name.length > SAMPLE_NAME_MAX_CHARS ? `${name.slice(0, SAMPLE_NAME_MAX_CHARS - 1)}…` : name;

/** What a member name may look like to be kept as it is: an identifier, as a field's name is. */
const PLAIN_NAME = /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/;
/** A member name's placeholder in a sample: a name the redaction made itself. */
const MADE_NAME = /^<member-\d+>$/;

/**
 * The words of a field's name: the legacy API's own members (`first_name`, `tag_ids`, `extra_data`,
 * `assigned_to`, `page_size`), the technical words of ids, channels and tracking (`chat_id`,
 * `utm_source`), and what a bot's form asks (`course`, `age`, `favourite_colour`): words of fields, not
 * names people are given. A member name made only of these words is a field's name; any other word
 * may be a person's (`Aziza`, `aziza_rahimova`, `jasur_k`), and the name is shown as `<member-N>`
 * (docs/operations/porting-guide.md).
 */
const FIELD_WORDS = new Set(
  `id ids uuid key keys type kind code status state stage step version lang language locale platform device app bot chat
  user username nickname login account profile telegram tg whatsapp instagram facebook fb vk viber web site url link page
  size count total limit offset cursor after before format search query filter sort order ref referrer referral utm source
  medium campaign content term channel ad ads click gclid fbclid yclid created updated deleted at on by in of date time
  timestamp start end from to first last middle full name phone mobile tel email mail address city region district country
  zip postcode street home work office contact contacts note notes comment comments text message description title answer
  answers question questions data extra meta metadata info details tag tags color colour group board assigned is has
  active enabled subscribed consent agree agreed accepted confirmed verified amount price sum cost currency payment paid
  discount promo coupon budget course courses class lesson level subject program programme grade school university study
  mode schedule slot day week month year hour age gender birth birthday birthdate dob passport document goal goals
  interest interests hobby hobbies favourite favorite quantity product item items list service category option choice
  value score rating feedback result quiz branch location latitude longitude timezone experience job position company
  salary income education skill skills reason purpose preferred preference method`.split(/\s+/),
);

/**
 * Whether a plain name is made only of FIELD_WORDS (snake_case, kebab-case, dotted or camelCase): a
 * word may end in two digits, a single letter (`x`, `a`) is a word too (it names nobody), and one
 * number of at most two digits may stand alone (`question_2`); digits alone never make a name.
 */
function isFieldName(name: string): boolean {
  const words = name.split(/[_.-]+|(?<=[a-z0-9])(?=[A-Z])/).filter((w) => w !== '');
  const numbers = words.filter((w) => /^\d{1,2}$/.test(w)).length;
  const named = words.filter((w) => {
    const m = /^([a-z]+)\d{0,2}$/.exec(w.toLowerCase());
    return m !== null && (m[1]!.length === 1 || FIELD_WORDS.has(m[1]!));
  }).length;
  return named > 0 && numbers <= 1 && named + numbers === words.length;
}

/**
 * A member name as the guide shows it: a name the integration's rules use, or a field's name
 * (isFieldName), as sent; anything else (a phone, an e-mail, a person's name or handle: a bot may key
 * its data by the person) becomes `<member-N>`, N its place among its object's members.
 */
export function keptName(name: string, index: number, rules: RedactionRules): string {
  if (rules.names.has(name)) return cutName(name);
  return PLAIN_NAME.test(name) && isFieldName(name) ? cutName(name) : `<member-${index + 1}>`;
}

function redactAny(value: unknown, depth: number, rules: RedactionRules): unknown {
  if (value === null || typeof value !== 'object') return placeholderOf(value);
  if (depth >= SAMPLE_MAX_DEPTH) return '<value>';
  if (Array.isArray(value)) {
    const items = value.slice(0, SAMPLE_MAX_MEMBERS).map((v) => redactAny(v, depth + 1, rules));
    return value.length > SAMPLE_MAX_MEMBERS ? [...items, TRUNCATED] : items;
  }
  const out: Record<string, unknown> = {};
  const entries = Object.entries(value);
  entries
    .slice(0, SAMPLE_MAX_MEMBERS)
    .forEach(([name, v], i) => (out[keptName(name, i, rules)] = redactAny(v, depth + 1, rules)));
  if (entries.length > SAMPLE_MAX_MEMBERS) out[TRUNCATED] = true;
  return out;
}

function redactExtraData(data: Record<string, unknown>, rules: RedactionRules): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const entries = Object.entries(data);
  entries.slice(0, SAMPLE_MAX_MEMBERS).forEach(([name, v], i) => {
    // The members the rules name are configuration: kept by name whatever they look like (keptName).
    const key = keptName(name, i, rules);
    // A person id sent as a number stays a number in the guide's examples: the v1 call sends what the legacy one did.
    if (rules.personIdMembers.has(name)) out[key] = typeof v === 'number' ? '<number-id>' : '<id>';
    else if (typeof v === 'string' && rules.mappedValues.get(name)?.has(v.toLowerCase())) out[key] = v;
    else out[key] = redactAny(v, 2, rules);
  });
  if (entries.length > SAMPLE_MAX_MEMBERS) out[TRUNCATED] = true;
  return out;
}

const catalogId = (v: unknown) => (typeof v === 'string' && UUID.test(v) ? v : placeholderOf(v));

function redactBody(body: unknown, rules: RedactionRules): unknown {
  if (body === null || body === undefined) return null;
  // A body no parser read (a forwarded stream, raw bytes) shows nothing of itself.
  if (Buffer.isBuffer(body) || ArrayBuffer.isView(body) || typeof (body as { pipe?: unknown }).pipe === 'function')
    return '<value>';
  if (typeof body !== 'object' || Array.isArray(body)) return redactAny(body, 0, rules);
  const out: Record<string, unknown> = {};
  const entries = Object.entries(body as Record<string, unknown>);
  for (const [i, [name, v]] of entries.slice(0, SAMPLE_MAX_MEMBERS).entries()) {
    const key = keptName(name, i, rules);
    if (name in BY_NAME) out[key] = v === null ? null : BY_NAME[name];
    else if (name === 'extra_data' && v !== null && typeof v === 'object' && !Array.isArray(v))
      out[key] = redactExtraData(v as Record<string, unknown>, rules);
    else if (CATALOG_IDS.has(name))
      out[key] = Array.isArray(v) ? v.slice(0, SAMPLE_MAX_MEMBERS).map(catalogId) : catalogId(v);
    else out[key] = redactAny(v, 1, rules);
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
  Object.keys(call.query ?? {})
    .slice(0, SAMPLE_MAX_MEMBERS)
    .forEach((name, i) => (query[keptName(name, i, rules)] = '<value>'));
  const { body, truncated } = bounded(redactBody(call.body, rules));
  return { method: call.method, path, query, body, status: call.status, truncated };
}

/** Each member name passed through keptName again, those the redaction made kept: see renamed. */
function renamedAny(value: unknown, rules: RedactionRules): unknown {
  if (Array.isArray(value)) return value.map((v) => renamedAny(v, rules));
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value).map(([name, v], i) => [
    name === TRUNCATED || MADE_NAME.test(name) ? name : keptName(name, i, rules),
    renamedAny(v, rules),
  ]);
  return Object.fromEntries(entries);
}

/**
 * A stored sample's member names as the rule of today shows them: a sample kept under an older, laxer
 * rule shows no name a new one would not. Its values are placeholders already.
 */
export function renamed(call: RedactedCall, rules: RedactionRules): RedactedCall {
  return {
    ...call,
    query: renamedAny(call.query ?? {}, rules) as Record<string, string>,
    body: renamedAny(call.body, rules),
  };
}
