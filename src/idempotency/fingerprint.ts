// The idempotency fingerprint: a hash of the canonical JSON of a body, and the paths where two differ.
import { hash } from 'node:crypto';
import { canonicalJson } from '../canonical-json.js';

// One-shot `hash` (Node >= 20.12): no Hash object per request.
export const fingerprint = (body: unknown): string => hash('sha256', canonicalJson(body), 'hex');

const escapePointer = (key: string) => key.replaceAll('~', '~0').replaceAll('/', '~1');
const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** JSON Pointers (RFC 6901) of every member present in one body and not equal in the other (`""`: the bodies themselves). */
export function differingPaths(a: unknown, b: unknown, base = ''): string[] {
  if (isObject(a) && isObject(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    return keys.flatMap((key) => differingPaths(a[key], b[key], `${base}/${escapePointer(key)}`));
  }
  return canonicalJson(a) === canonicalJson(b) ? [] : [base];
}
