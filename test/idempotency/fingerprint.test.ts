// The idempotency fingerprint: canonical JSON (keys sorted at every depth), so a resend that differs only
// in key order or white space is the same event, and any other difference is not.
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/canonical-json.js';
import { differingPaths, fingerprint } from '../../src/idempotency/fingerprint.js';

describe('canonicalJson', () => {
  it('sorts keys at every depth and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}',
    );
  });

  it('leaves out undefined members, writes undefined in an array as null, as JSON.stringify does', () => {
    const value = { a: undefined, b: [undefined, 'x'], c: {} };
    expect(canonicalJson(value)).toBe('{"b":[null,"x"],"c":{}}');
    expect(JSON.parse(canonicalJson(value))).toStrictEqual(JSON.parse(JSON.stringify(value)));
  });

  it('writes scalars and empty containers as JSON', () => {
    expect([[], {}, 'é"\\', 1.5, -0, null, true].map(canonicalJson)).toStrictEqual([
      '[]',
      '{}',
      '"é\\"\\\\"',
      '1.5',
      '0',
      'null',
      'true',
    ]);
  });

  it('escapes keys as JSON strings', () => {
    expect(canonicalJson({ 'a"b': 1, ключ: 2 })).toBe('{"a\\"b":1,"ключ":2}');
  });
});

describe('fingerprint', () => {
  it('is the same for the same data in another key order, and differs for other data', () => {
    const a = { event_id: 'e1', person: { first_name: 'Ann', phone: '+1' }, answers: { x: 1 } };
    const reordered = { answers: { x: 1 }, person: { phone: '+1', first_name: 'Ann' }, event_id: 'e1' };
    expect(fingerprint(reordered)).toBe(fingerprint(a));
    expect(fingerprint(a)).toMatch(/^[0-9a-f]{64}$/);
    expect(fingerprint({ ...a, answers: { x: 2 } })).not.toBe(fingerprint(a));
    expect(differingPaths(a, { ...a, answers: { x: 2 } })).toEqual(['/answers/x']);
    expect(differingPaths({ 'a/b~': 1 }, { 'a/b~': 2 })).toEqual(['/a~1b~0']);
    expect(differingPaths([1], [2])).toEqual(['']);
  });
});
