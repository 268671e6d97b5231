// SQLite's result codes told as the store's own errors: the one place outside this folder learns
// nothing of SQLITE_* codes.
import { NotReadyError, StoreUnavailableError } from '../store.js';

const codeOf = (error: unknown): string => String((error as { code?: unknown } | null)?.code ?? '');

/** SQLite's own failures to read or write the file, as opposed to a bug in a statement. */
const STORAGE_FAILURES = /^SQLITE_(IOERR|FULL|BUSY|LOCKED|CANTOPEN|READONLY|PROTOCOL)/;

/**
 * A failed read or unit of work -> the store error a caller can act on. A storage failure rolled the
 * unit back (disk error, disk full, lock held too long, read-only file): nothing of it stands, so a
 * client may resend it. Anything else (a statement's bug, a domain error thrown inside the unit) is
 * passed on as it is.
 */
export function toStoreError(error: unknown): unknown {
  const code = codeOf(error);
  if (STORAGE_FAILURES.test(code))
    return new StoreUnavailableError(
      'The store could not save or read this unit of work; nothing of it was kept.',
      code,
      { cause: error },
    );
  return error;
}

/** A second row where a UNIQUE constraint allows one (e.g. the same event recorded by another writer). */
export const isUniqueViolation = (error: unknown): boolean => codeOf(error) === 'SQLITE_CONSTRAINT_UNIQUE';

/** SQLite's result code of a failed readiness write -> what an operator has to fix. */
export function notReady(error: unknown): NotReadyError {
  const code = codeOf(error);
  if (code.startsWith('SQLITE_READONLY') || code === 'SQLITE_IOERR_WRITE' || code === 'SQLITE_CANTOPEN')
    return new NotReadyError('read-only', 'The database file cannot be written (read-only file, folder or mount).', {
      cause: error,
    });
  if (code === 'SQLITE_FULL')
    return new NotReadyError('disk-full', 'The disk of the database is full.', { cause: error });
  if (code.startsWith('SQLITE_IOERR'))
    return new NotReadyError('io-error', 'The database file cannot be written (I/O error).', { cause: error });
  return new NotReadyError('unavailable', 'The database does not accept writes.', { cause: error });
}
