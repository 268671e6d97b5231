// How PostgreSQL's failures become the store's own errors (src/store/postgres/errors.ts): which of them
// leave the database able to answer a read, so that a unit's failure may still be answered as the
// replay of an event recorded meanwhile, and which lost the server, when a read would only wait out
// its timeout before the 503 (src/idempotency/replay.ts).
import { describe, expect, it } from 'vitest';
import { toStoreError } from '../../../src/store/postgres/errors.js';
import { DuplicateEventError, StoreUnavailableError } from '../../../src/store/store.js';

const failure = (code: string, message = 'failed') => Object.assign(new Error(message), { code });

describe('PostgreSQL failures as store errors', () => {
  it.each([
    ['a server shutting down', failure('57P01')],
    ['a connection exception', failure('08006')],
    ['a socket reset', failure('ECONNRESET')],
    ['a refused connection', failure('ECONNREFUSED')],
    ['a connection the driver lost', new Error('Connection terminated unexpectedly')],
  ])('%s: unavailable, and no read is tried', (_name, error) => {
    const mapped = toStoreError(error);
    expect(mapped).toBeInstanceOf(StoreUnavailableError);
    expect((mapped as StoreUnavailableError).mayRead).toBe(false);
  });

  it.each([
    ['a full disk', failure('53100')],
    ['a read-only database', failure('25006')],
    ['a statement timeout', failure('57014')],
    ['a lock timeout', failure('55P03')],
    ['a deadlock past its retries', failure('40P01')],
  ])('%s: unavailable, and the database may still answer a read', (_name, error) => {
    const mapped = toStoreError(error);
    expect(mapped).toBeInstanceOf(StoreUnavailableError);
    expect((mapped as StoreUnavailableError).mayRead).toBe(true);
  });

  it('a second record of an event is the ledger refusing it; any other failure passes as it is', () => {
    expect(toStoreError(Object.assign(failure('23505'), { table: 'submissions' }))).toBeInstanceOf(DuplicateEventError);
    const other = failure('42601');
    expect(toStoreError(other)).toBe(other);
  });
});
