// The response serializer: checked mode refuses bodies that break or exceed their schema; off writes them.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { responseSerializer } from '../../src/http/serializer.js';

const schema = z.object({ id: z.string(), count: z.number().int() });
const route = { schema, method: 'GET', url: '/things/:id' };

describe('responseSerializer', () => {
  it('checked: writes a body that matches, refuses one that breaks the schema or carries an undeclared member', () => {
    const serialize = responseSerializer(true)(route);
    expect(JSON.parse(serialize({ count: 2, id: 'a' }))).toEqual({ id: 'a', count: 2 });
    expect(() => serialize({ id: 'a', count: 'two' })).toThrow();
    expect(() => serialize({ id: 'a', count: 2, secret: 'internal' })).toThrow(/members its schema does not declare/);
  });

  it('off: writes the body as it is, without the cost of the check', () => {
    const serialize = responseSerializer(false)(route);
    expect(serialize({ id: 'a', count: 2 })).toBe('{"id":"a","count":2}');
  });
});
