// The cursor of a paged list's `after`: the last row's sort key as a base64url JSON array, opaque to
// the client, which sends back the `next` of the page before.
import { AppError } from '../errors.js';

/** The `next` of a page: the members of `key` that `names` lists, in that order. */
export function encodeCursor<K extends string>(names: readonly K[], key: Readonly<Record<K, string>>): string {
  return Buffer.from(JSON.stringify(names.map((name) => key[name]))).toString('base64url');
}

/** The sort key an `after` holds: exactly the strings `names` lists, or a 400 saying what to send instead. */
export function decodeCursor<K extends string>(names: readonly K[], text: string): Record<K, string> {
  try {
    const parts = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(parts) && parts.length === names.length && parts.every((p) => typeof p === 'string')) {
      return Object.fromEntries(names.map((name, i) => [name, parts[i]])) as Record<K, string>;
    }
  } catch {
    // Told below, as every cursor that is not one.
  }
  throw new AppError('bad-request', '`after` is not a cursor this list answered: give the `next` of the page before.');
}
