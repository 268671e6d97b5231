// What logs, errors and the CLI show of a DATABASE_URL: never a password, wherever the URL holds it.
import { describe, expect, it } from 'vitest';
import { safeLocation } from '../../../src/store/postgres/pool.js';

describe('safeLocation', () => {
  it('masks the password of the userinfo and of the query, and keeps the rest', () => {
    expect(safeLocation('postgres://gw:s3cret@db:5432/gw')).toBe('postgres://gw:***@db:5432/gw');
    const shown = safeLocation('postgres://gw@db/gw?password=s3cret&sslpassword=k3y&sslmode=verify-full');
    expect(shown).not.toMatch(/s3cret|k3y/);
    expect(shown).toBe('postgres://gw@db/gw?password=***&sslpassword=***&sslmode=verify-full');
    expect(safeLocation('not a url with s3cret')).toBe('postgres://(an unreadable URL)');
  });
});
