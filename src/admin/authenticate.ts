// Authentication hook of /admin/v1: a named operator's personal token or the shared ADMIN_TOKEN.
import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import type { Store } from '../store/store.js';
import type { AuthFailureGuard } from '../rate-limit/auth-failures.js';
import { bearerToken, challenge } from '../migration/authenticate.js';
import { adminIdentity } from './credentials.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The operator behind an admin request: a named credential's name, or the shared token's name. */
    adminActor: string | null;
  }
}

/**
 * The admin API takes a named operator's personal token or the shared ADMIN_TOKEN; the audit log names
 * whoever the credential belongs to (a request body can add a reason, never an identity).
 */
export function adminAuthenticator(deps: {
  store: Store;
  adminToken: string;
  adminTokenName: string;
  authFailures: AuthFailureGuard;
}) {
  return async function authenticateAdmin(request: FastifyRequest): Promise<void> {
    await deps.authFailures.refuseIfThrottled(request, 'admin');
    const token = bearerToken(request);
    const actor =
      token === null
        ? null
        : await adminIdentity(deps.store, token, { token: deps.adminToken, name: deps.adminTokenName });
    if (actor === null) {
      if (token !== null) await deps.authFailures.recordFailure(request, 'admin');
      throw new AppError(
        'unauthorized',
        'The admin API takes Authorization: Bearer <admin token>; integration keys are not accepted.',
        {},
        challenge(token === null ? undefined : 'invalid_token'),
      );
    }
    request.adminActor = actor;
  };
}
