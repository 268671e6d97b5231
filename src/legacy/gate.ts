// The deprecated interface's gate: deprecation headers, the bot key (checked in migration/authenticate.ts),
// the sunset date and the switch-off 403.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import type { Store } from '../store/store.js';
import type { RulesHolder } from '../rules/loader.js';
import { legacyAuthenticator } from '../migration/authenticate.js';
import { hotReads } from '../store/hot-reads.js';
import { MIGRATION_GUIDE } from '../http/docs-routes.js';
import type { UsageRecorder } from '../migration/usage.js';
import { replacementFor } from '../porting/replacements.js';
import type { AuthFailureGuard } from '../rate-limit/auth-failures.js';

/** RFC 9745: the interface is deprecated as of this moment (a structured-field date). */
const DEPRECATED_SINCE = Date.UTC(2026, 0, 1) / 1000;

/** The Sunset header of each sunset date, formatted once rather than a Date built per legacy request. */
const sunsetHeaders = new Map<string, string>();
const httpDate = (isoDate: string) => {
  let header = sunsetHeaders.get(isoDate);
  if (header === undefined) sunsetHeaders.set(isoDate, (header = new Date(`${isoDate}T00:00:00Z`).toUTCString()));
  return header;
};

/**
 * Runs before the integration's quota is charged (routes.ts), so the 403 of a switched-off key costs
 * none: a forgotten bot that keeps calling after switch-off must not use up the v1 key's budget.
 */
export function legacyGate(deps: {
  store: Store;
  rules: RulesHolder;
  usage: UsageRecorder;
  authFailures: AuthFailureGuard;
  refusedKeyHashes?: ReadonlySet<string>;
}) {
  const authenticate = legacyAuthenticator(deps);
  return async function gate(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    reply.header('deprecation', `@${DEPRECATED_SINCE}`);
    reply.header('link', `<${MIGRATION_GUIDE}>; rel="deprecation"; type="text/html"`);
    // The key and the state are looked up one right after the other: one check of the store for both.
    const read = hotReads(deps.store);
    const integration = await authenticate(request, read);
    if (integration.legacy.sunset !== null) reply.header('sunset', httpDate(integration.legacy.sunset));

    const state = await read(`state:${integration.id}`, () => deps.store.readOne((r) => r.states.get(integration.id)));
    if (state === 'switched_off') {
      const replacement = replacementFor(request.method, request.url.split('?')[0] ?? '');
      throw new AppError(
        'forbidden',
        `The deprecated bot interface is switched off for ${integration.name}. ${replacement.advice} ` +
          `Use the v1 key with Authorization: Bearer; see ${MIGRATION_GUIDE}.`,
        { replacement: { method: replacement.method, path: replacement.path }, migration_guide: MIGRATION_GUIDE },
      );
    }
  };
}
