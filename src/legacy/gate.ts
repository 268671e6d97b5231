// The deprecated interface's gate: deprecation headers, the bot key (checked in migration/authenticate.ts),
// the sunset date, and the 403 of a switch-off or a brownout window.
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
import { brownoutAt, type Brownout } from '../rules/brownouts.js';
import { storedWindows } from '../migration/brownout-windows.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The brownout window a legacy call was refused in (counted apart by routes.ts), or null. */
    brownout: Brownout | null;
  }
}

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
  /** The clock brownout windows are read by (milliseconds since the epoch). */
  now?: () => number;
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
      const { replacement, advice } = whereToGo(request);
      throw new AppError(
        'forbidden',
        `The deprecated bot interface is switched off for ${integration.name}. ${advice}`,
        { replacement, migration_guide: MIGRATION_GUIDE },
      );
    }
    // A window is read from the rules, the stored windows remembered in memory (forgotten on every
    // change, on every replica: migration/brownout-windows.ts) and the clock on every call: it starts
    // and ends on every replica at once, and a switched-off integration (above) has none.
    const now = (deps.now ?? Date.now)();
    const brownout =
      brownoutAt(integration.legacy.brownouts, now) ??
      brownoutAt(await storedWindows(read, deps.store, integration.id), now);
    if (brownout) {
      request.brownout = brownout;
      const { replacement, advice } = whereToGo(request);
      const sunset = integration.legacy.sunset;
      throw new AppError(
        'brownout',
        `The deprecated bot interface is off for ${integration.name} until ${brownout.end}: a brownout, ` +
          `announcing its switch-off${sunset === null ? '' : ` on ${sunset}`}. ${advice}`,
        {
          replacement,
          migration_guide: MIGRATION_GUIDE,
          sunset,
          brownout: { start: brownout.start, end: brownout.end },
        },
        { 'retry-after': String(Math.max(1, Math.ceil((brownout.endMs - now) / 1000))) },
      );
    }
  };
}

/** The v1 call that replaces the request's legacy one, and the sentence that says where to go. */
function whereToGo(request: FastifyRequest) {
  const replacement = replacementFor(request.method, request.url.split('?')[0] ?? '');
  return {
    replacement: { method: replacement.method, path: replacement.path },
    advice: `${replacement.advice} Use the v1 key with Authorization: Bearer; see ${MIGRATION_GUIDE}.`,
  };
}
