// The console's infrastructure, scoped to its own routes: cookies, shared sessions, CSRF tokens, strict
// security headers, server-rendered views and form bodies. Nothing here reaches the API's routes.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import cookie from '@fastify/cookie';
import session from '@fastify/session';
import csrf from '@fastify/csrf-protection';
import helmet from '@fastify/helmet';
import view from '@fastify/view';
import { Eta } from 'eta';
import { AppError } from '../errors.js';
import { escapeControls } from '../printable-text.js';
import type { Store } from '../store/store.js';
import type { RulesHolder } from '../rules/loader.js';
import type { UsageRecorder } from '../migration/usage.js';
import type { AuthFailureGuard } from '../rate-limit/auth-failures.js';
import type { RateLimiter } from '../rate-limit/limiter.js';
import { consoleSessionStore, type ConsoleSessionData } from './session-store.js';
import { consoleRoutes } from './routes.js';
import { renderError } from './pages.js';
import type { StoreOutage } from '../outage.js';

declare module 'fastify' {
  // Declaration merging: @fastify/session's Session gets the console's members.
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface Session extends ConsoleSessionData {}
}

export interface ConsoleDeps {
  store: Store;
  rules: RulesHolder;
  usage: UsageRecorder;
  authFailures: AuthFailureGuard;
  /** The failed-authentication counter, also counted per user name at sign-in. */
  limiter: RateLimiter;
  secret: string;
  secureCookies: boolean;
  sharedTokenName: string;
  /** The app's store outage: a console page the store refused counts in it as an API request does. */
  outage: StoreOutage;
  /** Hosts a webhook endpoint may be reached at over plain http (WEBHOOK_ALLOW_HTTP_HOSTS), as the admin API's. */
  allowHttpHosts: readonly string[];
}

/** Templates and the style sheet sit beside this module, in src/ and (copied by `npm run build`) in dist/. */
const VIEWS_DIR = join(import.meta.dirname, 'views');
const STYLE_SHEET = join(import.meta.dirname, 'static', 'console.css');
/** The console's one script: the copy button beside a key shown once. Pages work without it. */
const SCRIPT = join(import.meta.dirname, 'static', 'console.js');
/** The tab's icon, at the address every browser asks for first: without it each fresh browser logs a 404. */
const FAVICON = join(import.meta.dirname, 'static', 'favicon.ico');
/** Static files: the style sheet, the script and the icon, cacheable; every other console answer is no-store. */
const isStatic = (url: string) => url.startsWith('/console/static/') || url === '/favicon.ico';

/** A form is a few fields: 16 KiB is far more than any console form sends. */
export const FORM_BODY_LIMIT_BYTES = 16 * 1024;

/**
 * Cookie names. Served over HTTPS the cookies take the __Host- prefix: the browser then keeps them
 * only if Secure, for path / and without Domain, so no sibling subdomain can set or shadow them.
 */
export function consoleCookies(secure: boolean) {
  return secure
    ? { session: '__Host-lg_console', csrf: '__Host-lg_csrf', known: '__Host-lg_known', path: '/' }
    : { session: 'lg_console', csrf: 'lg_csrf', known: 'lg_known', path: '/console' };
}

export function consolePlugin(deps: ConsoleDeps) {
  const sessions = consoleSessionStore(deps.store);
  const names = consoleCookies(deps.secureCookies);
  const css = readFileSync(STYLE_SHEET);
  const script = readFileSync(SCRIPT);
  const favicon = readFileSync(FAVICON);

  return async function register(app: FastifyInstance): Promise<void> {
    await app.register(cookie, { secret: deps.secret });
    await app.register(session, {
      secret: deps.secret,
      cookieName: names.session,
      store: sessions,
      // A row only for a signed-in person: visitors of the sign-in page cost the database nothing.
      saveUninitialized: false,
      rolling: true,
      // No Max-Age: the browser forgets the cookie when it closes; the database ends the session after
      // SESSION_IDLE_MS idle or SESSION_MAX_MS in all (session-store.ts). Lax lets a link from a mail
      // open the console signed in; every change is a POST with a CSRF token anyway.
      cookie: { path: names.path, httpOnly: true, sameSite: 'lax', secure: deps.secureCookies },
    });
    // The CSRF secret lives in its own signed cookie (double submit), not in the session: the sign-in
    // form is protected too, before there is any session to keep it in.
    await app.register(csrf, {
      sessionPlugin: '@fastify/cookie',
      cookieKey: names.csrf,
      cookieOpts: { path: names.path, httpOnly: true, sameSite: 'strict', secure: deps.secureCookies, signed: true },
      // Only from the form body: a token in a URL would end up in logs and Referer headers.
      getToken: (request) => (request.body as { _csrf?: string } | undefined)?._csrf,
    });
    await app.register(helmet, {
      contentSecurityPolicy: {
        useDefaults: false,
        // Self only, no inline script or style, no CDN: the console works offline and an injected
        // <script> or style attribute does not run.
        directives: {
          defaultSrc: ["'none'"],
          scriptSrc: ["'self'"],
          styleSrc: ["'self'"],
          imgSrc: ["'self'"],
          connectSrc: ["'self'"],
          formAction: ["'self'"],
          frameAncestors: ["'none'"],
          baseUri: ["'none'"],
          ...(deps.secureCookies ? { upgradeInsecureRequests: [] } : {}),
        },
      },
      // HSTS only where the console is served over HTTPS; on plain http (development) it would lie.
      strictTransportSecurity: deps.secureCookies,
      referrerPolicy: { policy: 'same-origin' },
    });
    // Eta escapes every <%= %> output (autoEscape); only <%~ %> writes raw HTML (the layout's body).
    await app.register(view, {
      engine: { eta: new Eta({ views: VIEWS_DIR, autoEscape: true, autoTrim: [false, 'nl'] }) },
      root: VIEWS_DIR,
    });

    // U+0000 in a decoded field or name is refused here, for every form at once, as the API refuses it in
    // JSON (PostgreSQL cannot store it; SQLite would). The URL's %00 is refused before this (nul-in-url.ts).
    app.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT_BYTES },
      (_request, body, done) => {
        const fields = [...new URLSearchParams(body as string)];
        const nul = fields.find(([name, value]) => name.includes('\u0000') || value.includes('\u0000'));
        if (nul !== undefined) {
          done(
            new AppError(
              'nul-character',
              `The form field "${escapeControls(nul[0])}" holds the character U+0000 (%00); it cannot be stored. Remove it and send the form again. Nothing was changed.`,
            ),
            undefined,
          );
          return;
        }
        done(null, Object.fromEntries(fields));
      },
    );
    // With Secure cookies a browser on plain http keeps none of them: every sign-in would fail as a
    // missing CSRF token. Said plainly instead (behind a TLS proxy, TRUST_PROXY makes this https).
    app.addHook('onRequest', async (request) => {
      if (deps.secureCookies && request.protocol !== 'https' && !isStatic(request.url)) {
        throw new AppError(
          'forbidden',
          'The console is served with Secure cookies: open it over HTTPS (behind a proxy, name it in TRUST_PROXY). For development on plain http, set CONSOLE_SECURE_COOKIES=false.',
        );
      }
    });
    // Every form posts its CSRF token: a POST without it (or with another browser's) is refused with 403.
    app.addHook('preHandler', (request, reply, done) => {
      if (request.method !== 'POST') return done();
      app.csrfProtection(request, reply, done);
    });
    // Pages hold people's data: no cache keeps them after sign-out.
    app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply) => {
      if (!isStatic(request.url)) reply.header('cache-control', 'no-store');
    });
    app.setErrorHandler((error, request, reply) => renderError(reply, request, error as Error, deps.outage));

    app.get('/console/static/console.css', { schema: { hide: true } }, (_request, reply) =>
      reply.header('content-type', 'text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(css),
    );
    app.get('/console/static/console.js', { schema: { hide: true } }, (_request, reply) =>
      reply
        .header('content-type', 'text/javascript; charset=utf-8')
        .header('cache-control', 'public, max-age=3600')
        .send(script),
    );
    app.get('/favicon.ico', { schema: { hide: true } }, (_request, reply) =>
      reply.header('content-type', 'image/x-icon').header('cache-control', 'public, max-age=86400').send(favicon),
    );
    consoleRoutes(app, { ...deps, sessions, cookies: names });
  };
}
