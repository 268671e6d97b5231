// The JSON body parser: nesting depth checked on the raw text before anything recursive runs, the
// numbers that JavaScript cannot carry exactly noted, so they can be refused instead of rounded, and
// the NUL character refused wherever it is written.
import { errorCodes, type FastifyInstance, type FastifyRequest } from 'fastify';
import secureJson from 'secure-json-parse';
import { AppError, shownPointer } from '../errors.js';

/** Objects and arrays inside one another, counting the body itself: `{"a":[1]}` is 2 deep. */
export const JSON_MAX_DEPTH = 32;
/** Values in a body (every member's value and every array element), on a route without a lower cap of its own. */
export const JSON_MAX_VALUES = 10_000;
/** Characters of one string's JSON text (a key or a value, escapes as written, quotes not counted), on every route. */
export const JSON_MAX_STRING_CHARS = 65_536;

declare module 'fastify' {
  interface FastifyRequest {
    /** JSON Pointers of the body's numbers whose text a JavaScript number does not hold exactly. */
    inexactNumbers?: string[];
  }
  interface FastifyContextConfig {
    /** The route's own caps on its JSON body, checked while the raw text is scanned (below). */
    jsonLimits?: RouteJsonLimits;
  }
}

/** A member of the body whose object (or array) may hold at most `max` members (or elements). */
export interface CountedMember {
  member: string;
  max: number;
  /** The `errors[].message` of the refusal, the same as the schema's own for that member. */
  message: string;
}

export interface RouteJsonLimits {
  /** Values in the whole body; JSON_MAX_VALUES when not given. */
  maxValues?: number;
  counted?: readonly CountedMember[];
}

export interface JsonScanLimits {
  maxDepth: number;
  maxValues: number;
  maxStringChars: number;
  counted: readonly CountedMember[];
}

/** The first limit the body breaks, where, and the problem that says so. */
export type JsonRefusal =
  | { kind: 'too-deep'; at: string }
  | { kind: 'too-many-values'; at: string }
  | { kind: 'string-too-long'; at: string }
  | { kind: 'too-many-members'; at: string; counted: CountedMember };

export interface JsonScan {
  /** Pointer of the first container past the depth limit, or null. */
  tooDeepAt: string | null;
  /** The first limit broken (the depth included), or null; the scan stops there. */
  refusal: JsonRefusal | null;
  inexactNumbers: string[];
  /** Pointer of the first member whose key or string value holds U+0000 (written `\u0000`), or null. */
  nulAt: string | null;
}

interface Frame {
  array: boolean;
  /** Array: the index of the current element. Object: where the current key's string token starts and ends. */
  index: number;
  keyStart: number;
  keyEnd: number;
  expectKey: boolean;
  /** Values seen directly in this container, and the most it may hold (a counted member), or -1. */
  values: number;
  cap: number;
  counted: CountedMember | null;
}

const escapePointer = (key: string) => key.replaceAll('~', '~0').replaceAll('/', '~1');

/**
 * Inexact numbers are looked for where the gateway reads numbers by key: members of the body (a
 * payment's `amount`) and members of its objects (`answers`, `extra_data`). Deeper ones, ones under a
 * key longer than MAX_KEY_TEXT, and any past the first MAX_INEXACT_NOTED, are not noted: the scan's
 * cost stays linear in the body whatever its shape.
 */
const INEXACT_MAX_DEPTH = 2;
const MAX_KEY_TEXT = 1_024;
export const MAX_INEXACT_NOTED = 1_000;

/** Keys longer than this (in the body's text) are cut in a pointer shown to the client. */
const SHOWN_KEY_CHARS = 64;

/**
 * The JSON Pointer of the current position. `cut` shortens long keys (for a message); without it a
 * key over MAX_KEY_TEXT makes the pointer null: no member the gateway reads has such a name, and
 * parsing it again for every number below it would cost without bound.
 */
function pointerOf(text: string, stack: readonly Frame[], cut: boolean): string | null {
  let out = '';
  for (const frame of stack) {
    if (frame.array) out += `/${frame.index}`;
    else if (frame.keyStart >= 0) {
      if (!cut && frame.keyEnd - frame.keyStart > MAX_KEY_TEXT) return null;
      let key: string;
      try {
        key = JSON.parse(
          text.slice(frame.keyStart, Math.min(frame.keyEnd, frame.keyStart + MAX_KEY_TEXT + 2)),
        ) as string;
      } catch {
        key = text.slice(frame.keyStart + 1, Math.min(frame.keyEnd - 1, frame.keyStart + 1 + MAX_KEY_TEXT));
      }
      out += `/${escapePointer(cut && key.length > SHOWN_KEY_CHARS ? `${key.slice(0, SHOWN_KEY_CHARS)}…` : key)}`;
    }
  }
  return out;
}

const DECIMAL = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/** `12.30e1` -> `123e0`: sign, significant digits and exponent, so two spellings of one value compare equal. */
function canonicalDecimal(token: string): string | null {
  const m = DECIMAL.exec(token);
  if (!m) return null;
  const frac = m[3] ?? '';
  let digits = (m[2]! + frac).replace(/^0+/, '');
  if (digits === '') return '0';
  let exponent = Number(m[4] ?? 0) - frac.length;
  const trimmed = digits.replace(/0+$/, '');
  exponent += digits.length - trimmed.length;
  digits = trimmed;
  return `${m[1]}${digits}e${exponent}`;
}

/**
 * A number token is carried exactly when the JavaScript number it becomes prints back as the same
 * value: 1e400 (Infinity), 1e-400 (0), 9007199254740993 and 0.1000000000000000001 are not. At most
 * 15 digits without an exponent always are (IEEE doubles hold 15 significant decimal digits).
 */
export function isExactNumber(token: string): boolean {
  if (token.length <= 15 && !/[eE]/.test(token)) return true;
  const value = Number(token);
  if (!Number.isFinite(value)) return false;
  const sent = canonicalDecimal(token);
  return sent === null || sent === canonicalDecimal(String(value));
}

const isNumberChar = (c: number) => (c >= 48 && c <= 57) || c === 45 || c === 43 || c === 46 || c === 69 || c === 101;

const NUL_ESCAPE = '\\u0000';

/** Backslashes right before `at`: an even count leaves the one at `at` an escape of its own. */
function backslashesBefore(text: string, at: number): number {
  let n = 0;
  while (text.charCodeAt(at - 1 - n) === 92 /* \ */) n++;
  return n;
}

/** Whether the current key of `frame` is written exactly `name` (no escapes), compared in place. */
const keyIs = (text: string, frame: Frame, name: string) =>
  frame.keyEnd - frame.keyStart - 2 === name.length && text.startsWith(name, frame.keyStart + 1);

const scanResult = (refusal: JsonRefusal | null, inexactNumbers: string[], nulAt: string | null): JsonScan => ({
  tooDeepAt: refusal?.kind === 'too-deep' ? refusal.at : null,
  refusal,
  inexactNumbers,
  nulAt,
});

const NONE_COUNTED: readonly CountedMember[] = [];

/** The pointer shown in a refusal (long keys cut: never null); the body itself is `""` (RFC 6901). */
const shown = (text: string, frames: readonly Frame[]): string => pointerOf(text, frames, true) ?? '';

/** A value starts in the container on top of the stack, the `values`th of the body: past a cap? */
function countValue(text: string, stack: readonly Frame[], values: number, maxValues: number): JsonRefusal | null {
  if (values > maxValues) return { kind: 'too-many-values', at: shown(text, stack) };
  const top = stack[stack.length - 1];
  if (top !== undefined && top.counted !== null && ++top.values > top.cap)
    return { kind: 'too-many-members', at: shown(text, stack.slice(0, -1)), counted: top.counted };
  return null;
}

/**
 * One pass over the raw text, without recursion, respecting strings and escapes: the depth of
 * nesting, the number of values (every member's value and every array element), the length of each
 * string, and the members of the counted members of the body (`answers`), stopping at the first
 * limit broken; the pointers of inexact numbers; and the first string holding U+0000. Strings are
 * skipped with `indexOf`, and nothing is allocated per character or per value, so a body refused
 * costs the text up to its first excess and no more: a body of 90,000 answers stops at the 201st.
 * JSON can only write U+0000 as the escape `\u0000` (a raw one is malformed JSON), so one search of
 * the whole text finds the candidates, and a body without one (nearly all of them) costs that single
 * search and nothing per string. A counted member is recognised by its key as written: one spelled
 * with escapes (`"answ\u0065rs"`) is left to the schema's own count, within the cap on values.
 * Malformed text is not judged here; the parser that follows reports it.
 */
export function scanJson(text: string, given: Partial<JsonScanLimits> = {}): JsonScan {
  const maxDepth = given.maxDepth ?? JSON_MAX_DEPTH;
  const maxValues = given.maxValues ?? JSON_MAX_VALUES;
  const maxStringChars = given.maxStringChars ?? JSON_MAX_STRING_CHARS;
  const counted = given.counted ?? NONE_COUNTED;
  const stack: Frame[] = [];
  const inexactNumbers: string[] = [];
  let nulAt: string | null = null;
  let nextNul = text.indexOf(NUL_ESCAPE);
  // The body itself is a value: the cap counts what it holds.
  let values = -1;
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      let end = i;
      for (;;) {
        end = text.indexOf('"', end + 1);
        if (end < 0) return scanResult(null, inexactNumbers, nulAt);
        if (backslashesBefore(text, end) % 2 === 0) break;
      }
      const top = stack[stack.length - 1];
      if (top && !top.array && top.expectKey) {
        top.keyStart = i;
        top.keyEnd = end + 1;
      } else {
        const refusal = countValue(text, stack, ++values, maxValues);
        if (refusal) return scanResult(refusal, inexactNumbers, nulAt);
      }
      if (end - i - 1 > maxStringChars)
        return scanResult({ kind: 'string-too-long', at: shown(text, stack) }, inexactNumbers, nulAt);
      // `\\u0000` is a backslash and the text u0000: only an unescaped backslash starts the escape.
      while (nextNul >= 0 && nextNul < end) {
        if (nextNul > i && backslashesBefore(text, nextNul) % 2 === 0) {
          nulAt = pointerOf(text, stack, true);
          nextNul = -1;
        } else nextNul = text.indexOf(NUL_ESCAPE, nextNul + 1);
      }
      i = end + 1;
    } else if (c === 123 /* { */ || c === 91 /* [ */) {
      const refusal = countValue(text, stack, ++values, maxValues);
      if (refusal) return scanResult(refusal, inexactNumbers, nulAt);
      const parent = stack[stack.length - 1];
      let member: CountedMember | null = null;
      if (stack.length === 1 && parent && !parent.array)
        for (const m of counted) if (keyIs(text, parent, m.member)) member = m;
      stack.push({
        array: c === 91,
        index: 0,
        keyStart: -1,
        keyEnd: -1,
        expectKey: c === 123,
        values: 0,
        cap: member?.max ?? -1,
        counted: member,
      });
      if (stack.length > maxDepth)
        return scanResult({ kind: 'too-deep', at: shown(text, stack.slice(0, -1)) }, inexactNumbers, nulAt);
      i++;
    } else if (c === 125 /* } */ || c === 93 /* ] */) {
      stack.pop();
      i++;
    } else if (c === 44 /* , */) {
      const top = stack[stack.length - 1];
      if (top?.array) top.index++;
      else if (top) top.expectKey = true;
      i++;
    } else if (c === 58 /* : */) {
      const top = stack[stack.length - 1];
      if (top) top.expectKey = false;
      i++;
    } else if (c === 45 || (c >= 48 && c <= 57)) {
      const refusal = countValue(text, stack, ++values, maxValues);
      if (refusal) return scanResult(refusal, inexactNumbers, nulAt);
      let end = i + 1;
      while (end < text.length && isNumberChar(text.charCodeAt(end))) end++;
      if (
        stack.length <= INEXACT_MAX_DEPTH &&
        inexactNumbers.length < MAX_INEXACT_NOTED &&
        !isExactNumber(text.slice(i, end))
      ) {
        const pointer = pointerOf(text, stack, false);
        if (pointer !== null) inexactNumbers.push(pointer);
      }
      i = end;
    } else {
      // true, false and null: no other character of them starts one.
      if (c === 116 /* t */ || c === 102 /* f */ || c === 110 /* n */) {
        const refusal = countValue(text, stack, ++values, maxValues);
        if (refusal) return scanResult(refusal, inexactNumbers, nulAt);
      }
      i++;
    }
  }
  return scanResult(null, inexactNumbers, nulAt);
}

/** The keys directly below `prefix` (e.g. `/answers`) whose value is an inexact number. */
export function inexactKeysUnder(request: Pick<FastifyRequest, 'inexactNumbers'>, prefix: string): Set<string> {
  const keys = new Set<string>();
  for (const pointer of request.inexactNumbers ?? []) {
    if (!pointer.startsWith(`${prefix}/`)) continue;
    const rest = pointer.slice(prefix.length + 1);
    if (!rest.includes('/')) keys.add(rest.replaceAll('~1', '/').replaceAll('~0', '~'));
  }
  return keys;
}

/**
 * PostgreSQL cannot store U+0000 in `text` or `jsonb` (SQLite can): accepted, a NUL would be a 500 on
 * one engine and stored on the other. It is refused on both, before anything is read or written.
 */
function nulInBody(at: string): AppError {
  const shown = shownPointer(at).replaceAll('\0', '\\u0000');
  return new AppError(
    'nul-character',
    `The body holds the character U+0000 (\\u0000) at ${shown}; it cannot be stored. Remove it and resend.`,
    {
      errors: [{ path: at, message: 'holds the character U+0000' }],
    },
  );
}

/** The escape of a UTF-16 surrogate (`\ud800`-`\udfff`): the only way JSON text can hold an unpaired one. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

const isWellFormed = (text: string): boolean => (text as unknown as { isWellFormed(): boolean }).isWellFormed();

/**
 * The pointer of the first key or string holding a surrogate without its pair (`"\ud800"`), or null.
 * Such text is not Unicode: PostgreSQL refuses it in `text` and `jsonb`, and it cannot be written as
 * UTF-8. The walk runs only for bodies whose text has a surrogate escape at all, over a value whose
 * depth the scan already bounded.
 */
export function unpairedSurrogateAt(value: unknown, at = ''): string | null {
  if (typeof value === 'string') return isWellFormed(value) ? null : at;
  if (typeof value !== 'object' || value === null) return null;
  const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
  for (const [key, member] of entries) {
    const pointer = `${at}/${escapePointer(key)}`;
    if (!isWellFormed(key)) return pointer;
    const found = unpairedSurrogateAt(member, pointer);
    if (found !== null) return found;
  }
  return null;
}

/** The problem for the first limit a body breaks: nothing of it has been parsed yet. */
function refusalError(refusal: JsonRefusal, maxValues: number): AppError {
  switch (refusal.kind) {
    case 'too-deep':
      return new AppError(
        'nesting-too-deep',
        `The body nests objects and arrays deeper than ${JSON_MAX_DEPTH} levels (at ${shownPointer(refusal.at)}).`,
        {
          errors: [{ path: refusal.at, message: `nests deeper than ${JSON_MAX_DEPTH} levels` }],
          max_depth: JSON_MAX_DEPTH,
        },
      );
    case 'too-many-values':
      return new AppError(
        'too-many-values',
        `The body holds more than ${maxValues} values (members and array elements) on this route; the first past it is at ${shownPointer(refusal.at)}.`,
        {
          errors: [{ path: refusal.at, message: `is past the ${maxValues} values this route takes in one body` }],
          max_values: maxValues,
        },
      );
    case 'string-too-long':
      return new AppError(
        'string-too-long',
        `A string of the body is longer than ${JSON_MAX_STRING_CHARS} characters of JSON text (at ${shownPointer(refusal.at)}).`,
        {
          errors: [{ path: refusal.at, message: `is longer than ${JSON_MAX_STRING_CHARS} characters` }],
          max_chars: JSON_MAX_STRING_CHARS,
        },
      );
    case 'too-many-members':
      // The same problem the schema gives for this member, found before anything is parsed.
      return new AppError('validation-failed', `${shownPointer(refusal.at)}: ${refusal.counted.message}`, {
        errors: [{ path: refusal.at, message: refusal.counted.message }],
      });
  }
}

/**
 * Replaces Fastify's JSON parser. Fastify's own hands the text straight to the parser, and a body a
 * few kilobytes long nested thousands deep then overflows the stack in the code that walks it (the
 * idempotency fingerprint, the 409 path diff, the schemas): a 500 for one request, on any route.
 * The prototype-poisoning protection stays as Fastify configures it (secure-json-parse: `__proto__`
 * refused, `constructor` left alone).
 */
export function registerJsonParser(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    if (text.length === 0) return done(new errorCodes.FST_ERR_CTP_EMPTY_JSON_BODY(), undefined);
    const own = request.routeOptions.config?.jsonLimits;
    const scan = scanJson(text, own ? { maxValues: own.maxValues ?? JSON_MAX_VALUES, counted: own.counted ?? [] } : {});
    if (scan.refusal !== null) return done(refusalError(scan.refusal, own?.maxValues ?? JSON_MAX_VALUES), undefined);
    let parsed: unknown;
    try {
      parsed = secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'ignore' });
    } catch {
      return done(new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY(), undefined);
    }
    if (scan.nulAt !== null) return done(nulInBody(scan.nulAt), undefined);
    const unpaired = SURROGATE_ESCAPE.test(text) ? unpairedSurrogateAt(parsed) : null;
    if (unpaired !== null) {
      return done(
        new AppError(
          'unpaired-surrogate',
          `The body holds half of a UTF-16 surrogate pair at ${shownPointer(unpaired)} (an escape such as \\ud800 without its partner); it is not Unicode text and cannot be stored.`,
          {
            errors: [{ path: unpaired, message: 'holds an unpaired surrogate' }],
          },
        ),
        undefined,
      );
    }
    if (scan.inexactNumbers.length > 0) request.inexactNumbers = scan.inexactNumbers;
    return done(null, parsed);
  });
}
