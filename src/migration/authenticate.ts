// The integrations' key checks, v1 (Authorization: Bearer) and legacy (X-Bot-API-Key), each counting a
// wrong key against the client's failed-authentication budget; and the Bearer parsing the admin API shares.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import { TEST_MODE_HEADER } from '../test-mode.js';
import type { Store } from '../store/store.js';
import type { Integration } from '../rules/catalog.js';
import type { RulesHolder } from '../rules/loader.js';
import { findLiveKey } from './keys.js';
import type { AuthFailureGuard } from '../rate-limit/auth-failures.js';
import type { HotRead } from '../store/hot-reads.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The integration whose key authenticated this request (v1 and legacy routes). */
    integration: Integration | null;
    /** A v1 request authenticated by a test key: it runs the whole v1 path and keeps nothing (docs/api.md, "Test mode"). */
    v1TestMode: boolean;
  }
}

/** The header as the OpenAPI document declares it on every v1 response. */
export const TEST_MODE_RESPONSE_HEADERS = {
  'Lead-Gateway-Test-Mode': {
    description:
      'Present, as "true", on every answer to a call made with a test key (lgtest_…): the call ran the whole v1 path and ' +
      'nothing of it was kept. Absent on the answers to the live v1 key.',
    schema: { type: 'string', enum: ['true'] },
  },
};

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

/** What a key check reads: the keys, the integrations they belong to, the budget, the published keys refused. */
interface KeyCheckDeps {
  store: Store;
  rules: RulesHolder;
  authFailures: AuthFailureGuard;
  refusedKeyHashes?: ReadonlySet<string>;
}

export function v1Authenticator(deps: KeyCheckDeps) {
  return async function authenticateV1(request: FastifyRequest, reply: FastifyReply): Promise<void> {
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
    const key = await findLiveKey(deps.store, token, ['v1', 'test'], deps.refusedKeyHashes);
    const integration = key ? deps.rules.current().integrations.get(key.integrationId) : undefined;
    if (!integration) {
      await deps.authFailures.recordFailure(request, 'v1');
      throw new AppError(
        'unauthorized',
        'The key is unknown, revoked, or not a v1 integration key.',
        {},
        challenge('invalid_token'),
      );
    }
    request.integration = integration;
    request.apiKeyId = key!.id;
    if (key!.kind === 'test') {
      request.v1TestMode = true;
      reply.header(TEST_MODE_HEADER, 'true');
    }
  };
}

const LEGACY_CHALLENGE = { 'www-authenticate': 'X-Bot-API-Key realm="lead-gateway"' };

/**
 * The deprecated interface's key check (legacy/gate.ts runs it): answers the integration of a live
 * legacy key. `read`: the look-ups the gate shares with it (store/hot-reads.ts).
 */
export function legacyAuthenticator(deps: KeyCheckDeps) {
  return async function authenticateLegacy(request: FastifyRequest, read?: HotRead): Promise<Integration> {
    await deps.authFailures.refuseIfThrottled(request, 'legacy');
    const secret = request.headers['x-bot-api-key'];
    if (typeof secret !== 'string' || secret === '') {
      throw new AppError('unauthorized', 'Send the bot key in the X-Bot-API-Key header.', {}, LEGACY_CHALLENGE);
    }
    const key = await findLiveKey(deps.store, secret, 'legacy', deps.refusedKeyHashes, read);
    const integration = key ? deps.rules.current().integrations.get(key.integrationId) : undefined;
    if (!integration) {
      await deps.authFailures.recordFailure(request, 'legacy');
      throw new AppError('unauthorized', 'The bot key is unknown or revoked.', {}, LEGACY_CHALLENGE);
    }
    request.integration = integration;
    request.apiKeyId = key!.id;
    return integration;
  };
}
