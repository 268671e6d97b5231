// Authentication hook of v1: integration keys (Bearer), and the Bearer parsing the admin API shares.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import type { Store } from '../store/store.js';
import type { Integration } from '../rules/catalog.js';
import type { RulesHolder } from '../rules/loader.js';
import { findLiveKey } from './keys.js';
import type { AuthFailureGuard } from '../rate-limit/auth-failures.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The integration whose key authenticated this request (v1 and legacy routes). */
    integration: Integration | null;
  }
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

export function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (header === undefined) return null;
  return BEARER.exec(header)?.[1] ?? null;
}

/** RFC 6750: a request without credentials gets a bare challenge, a bad token gets error="invalid_token". */
export const challenge = (error?: 'invalid_token') => ({
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
