// Authentication hooks: integration keys for v1 (Bearer) and the admin token for /admin/v1.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import type { Store } from '../store/store.js';
import type { Integration } from '../rules/catalog.js';
import type { RulesHolder } from '../rules/loader.js';
import { findLiveKey } from './keys.js';
import { adminIdentity } from '../admin/credentials.js';
import type { AuthFailureGuard } from '../rate-limit/auth-failures.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The integration whose key authenticated this request (v1 and legacy routes). */
    integration: Integration | null;
  }
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (header === undefined) return null;
  return BEARER.exec(header)?.[1] ?? null;
}

/** RFC 6750: a request without credentials gets a bare challenge, a bad token gets error="invalid_token". */
const challenge = (error?: 'invalid_token') => ({
  'www-authenticate': error ? `Bearer realm="lead-gateway", error="${error}"` : 'Bearer realm="lead-gateway"',
});

export function v1Authenticator(deps: { store: Store; rules: RulesHolder; authFailures: AuthFailureGuard; refusedKeyHashes?: ReadonlySet<string> }) {
  return async function authenticateV1(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    await deps.authFailures.refuseIfThrottled(request, 'v1');
    const header = request.headers.authorization;
    const token = bearerToken(request);
    if (token === null) {
      throw new AppError(
        'unauthorized',
        header === undefined
          ? 'Send the integration key as Authorization: Bearer <key>.'
          : 'The Authorization header is not of the form "Bearer <key>".',
        {},
        challenge(header === undefined ? undefined : 'invalid_token'),
      );
    }
    const key = await findLiveKey(deps.store, token, 'v1', deps.refusedKeyHashes);
    const integration = key ? deps.rules.current().integrations.get(key.integrationId) : undefined;
    if (!integration) {
      await deps.authFailures.recordFailure(request, 'v1');
      throw new AppError('unauthorized', 'The key is unknown, revoked, or not a v1 integration key.', {}, challenge('invalid_token'));
    }
    request.integration = integration;
    request.apiKeyId = key!.id;
  };
}

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
export function adminAuthenticator(deps: { store: Store; adminToken: string; adminTokenName: string; authFailures: AuthFailureGuard }) {
  return async function authenticateAdmin(request: FastifyRequest): Promise<void> {
    await deps.authFailures.refuseIfThrottled(request, 'admin');
    const token = bearerToken(request);
    const actor = token === null ? null : await adminIdentity(deps.store, token, { token: deps.adminToken, name: deps.adminTokenName });
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
