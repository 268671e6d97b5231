// Canonical JSON: object keys sorted at every depth, so key order and white space never matter. The
// idempotency fingerprint hashes it, the response check in development compares by it.

/** JSON with object keys sorted at every depth, so key order and white space never matter. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  // Built by appending (no intermediate arrays): every request's body goes through here.
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + canonicalJson(value[i]);
    return `${out}]`;
  }
  const object = value as Record<string, unknown>;
  const keys = Object.keys(object).sort();
  let out = '{';
  for (const key of keys) {
    const member = object[key];
    if (member === undefined) continue;
    out += `${out.length === 1 ? '' : ','}${JSON.stringify(key)}:${canonicalJson(member)}`;
  }
  return `${out}}`;
}
