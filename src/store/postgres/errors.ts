// PostgreSQL's SQLSTATEs and the driver's socket failures told as the store's own errors: the one
// place outside this folder learns nothing of them.
import { DuplicateEventError, NotReadyError, StoreUnavailableError } from '../store.js';

const codeOf = (error: unknown): string => String((error as { code?: unknown } | null)?.code ?? '');

/** Server shutting down or starting (57P01-57P03), connection exceptions (class 08), too many connections. */
const SERVER_GONE = /^(57P0[123]|08...|53300)$/;
/** The socket failed under the driver. */
const SOCKET_FAILURES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
/** Out of disk (53100) or memory (53200), read-only transaction on a standby (25006), I/O error (58030). */
const STORAGE_FAILURES = new Set(['53100', '53200', '25006', '58030']);
/** Cancelled by statement_timeout (57014) or lock_timeout (55P03). */
const TIMEOUTS = new Set(['57014', '55P03']);

/**
 * The driver's own words for a connection it lost or never had: it throws plain Errors for them, with
 * no code (node-postgres 8.x).
 */
const DRIVER_FAILURES =
  /^(Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error|Connection terminated unexpectedly)/;

/** Why the engine could not serve, as a short code for the log, or null when the failure is not the engine's. */
export function unavailableCode(error: unknown): string | null {
  const code = codeOf(error);
  if (SERVER_GONE.test(code) || SOCKET_FAILURES.has(code) || STORAGE_FAILURES.has(code) || TIMEOUTS.has(code))
    return code;
  const message = error instanceof Error ? error.message : '';
  if (DRIVER_FAILURES.test(message)) return 'connection-lost';
  return null;
}

/** A serialization failure (40001) or a deadlock (40P01): the unit was rolled back and may run again. */
export const isRetryable = (error: unknown): boolean => ['40001', '40P01'].includes(codeOf(error));

/** A second row where a unique constraint allows one (23505). */
export const isUniqueViolation = (error: unknown): boolean => codeOf(error) === '23505';

/**
 * The ledger refused a second record of an event (repos/submissions.ts): its uniqueness of
 * (integration, endpoint, event_id), or of the record's id, which is new for every record made.
 */
const isDuplicateEvent = (error: unknown): boolean =>
  isUniqueViolation(error) && (error as { table?: unknown }).table === 'submissions';

/**
 * A failed read or unit of work -> the store error a caller can act on. A lost server, a timeout or
 * a storage failure rolled the unit back: nothing of it stands, so a client may resend it. Anything
 * else (a statement's bug, a domain error thrown inside the unit) is passed on as it is.
 */
export function toStoreError(error: unknown): unknown {
  if (error instanceof StoreUnavailableError || error instanceof NotReadyError || error instanceof DuplicateEventError)
    return error;
  if (isDuplicateEvent(error)) return new DuplicateEventError();
  const code = unavailableCode(error) ?? (isRetryable(error) ? codeOf(error) : null);
  if (code !== null) {
    const lost = SERVER_GONE.test(code) || SOCKET_FAILURES.has(code) || code === 'connection-lost';
    return new StoreUnavailableError(
      'The store could not save or read this unit of work; nothing of it was kept.',
      code,
      { cause: error, mayRead: !lost },
    );
  }
  return error;
}

/** A failed readiness write -> what an operator has to fix. */
export function notReady(error: unknown): NotReadyError {
  const code = codeOf(error);
  if (code === '25006')
    return new NotReadyError(
      'read-only',
      'The database takes no writes (a standby, or default_transaction_read_only).',
      { cause: error },
    );
  if (code === '53100')
    return new NotReadyError('disk-full', 'The disk of the database server is full.', { cause: error });
  if (code === '58030')
    return new NotReadyError('io-error', 'The database server cannot write its files (I/O error).', { cause: error });
  return new NotReadyError('unavailable', 'The database does not accept writes.', { cause: error });
}
