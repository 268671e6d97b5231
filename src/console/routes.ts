// The console's pages: sign-in and sign-out, the integrations overview, an integration's page. Thin:
// each reads the form or query, calls a service (the admin API's own), and renders a view.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import { clientBucket } from '../rate-limit/auth-failures.js';
import { FULL_REPORT, migrationReport } from '../migration/report.js';
import { BROWNOUTS_PAGE_MAX, listBrownouts } from '../migration/brownout-windows.js';
import { BROWNOUT_MINUTES_MAX } from '../rules/brownouts.js';
import { relinkLegacyLeads } from '../migration/service.js';
import type { ConsoleDeps } from './plugin.js';
import type { consoleSessionStore } from './session-store.js';
import { checkSignIn, checkTokenSignIn, type Viewer } from './users.js';
import { KNOWN_DEVICE_MAX_AGE_S, knownDevices } from './known-device.js';
import { bucketUsage, chartModel, defaultRange, rangeStartHour, WIDEST_RANGE, type ChartRange } from './chart.js';
import { consoleActions, refuseUnlessServiceTeam, type ConfirmStep, type IntegrationExtras } from './actions.js';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { listAudit, listKeys } from '../migration/reads.js';
import { consoleFlash } from './flash.js';
import { ConsoleIntegrationParamsSchema, IntegrationPageQuerySchema, NotFoundPageQuerySchema } from './schemas.js';
import { NOT_FOUND_PAGE_DEFAULT, notFoundAnswers } from '../migration/porting.js';
import type { Integration } from '../rules/catalog.js';
import { integrationForViewer, integrationsOverview, OverviewQuerySchema, SORT_COLUMNS } from './overview.js';
import { render, rendered, viewerOf } from './pages.js';
import { ADMIN_NAME } from '../admin/credentials.js';
import { answerRoutes } from './answer-routes.js';
import { portingGuide } from '../porting/service.js';
import { leadRoutes } from './lead-routes.js';
import { testMatchRoutes } from './test-match-routes.js';
import { webhookPages } from './webhook-routes.js';

/**
 * Failed sign-ins a minute for one user name, from any address: the per-address budget
 * (AUTH_FAILURES_PER_MINUTE) stops one guesser; this one stops many addresses guessing one person's
 * password. It counts browsers that never signed in as that name; a browser that did (its
 * known-device cookie) has a budget of the same size of its own, shared only with the name's other
 * known browsers, so guesses from elsewhere cannot lock the real person out.
 */
export const SIGN_IN_FAILURES_PER_NAME_PER_MINUTE = 5;

const hidden = { schema: { hide: true } };
const SIGN_IN = '/console/sign-in';
const OVERVIEW = '/console/integrations';
/** Unlinked legacy leads listed on an integration's page; the rest are counted (the admin report has all). */
export const UNLINKED_LEADS_SHOWN = 50;
/** Audit entries on an integration's page, newest first (the admin API's GET .../audit pages further). */
export const AUDIT_ENTRIES_SHOWN = 20;

type RouteDeps = ConsoleDeps & {
  sessions: ReturnType<typeof consoleSessionStore>;
  cookies: { session: string; csrf: string; known: string; path: string };
};

const field = (body: unknown, name: string): string => {
  const value = (body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : '';
};

export function consoleRoutes(app: FastifyInstance, deps: RouteDeps): void {
  const migration = { store: deps.store, usage: deps.usage };
  const routes = app.withTypeProvider<ZodTypeProvider>();
  const flashes = consoleFlash(deps.store, deps.secret);
  const devices = knownDevices(deps.secret);
  /** The name's budget for browsers that never signed in as it, or its known browsers' own. */
  const budgetKey = (name: string, knownAs: string | null) =>
    knownAs === null ? `console-name:${name}` : `console-known:${knownAs}`;

  /** The signed-in person; a page asked for without a session goes to the sign-in form. */
  function signedIn(request: FastifyRequest, reply: FastifyReply): Viewer | null {
    const viewer = viewerOf(request);
    if (viewer === null) {
      if (request.method === 'GET') void reply.redirect(SIGN_IN, 303);
      else
        throw new AppError('unauthorized', 'Your session has ended. Sign in again, then repeat what you were doing.');
    }
    return viewer;
  }

  app.get('/console', hidden, (request, reply) => reply.redirect(viewerOf(request) ? OVERVIEW : SIGN_IN, 303));

  app.get(SIGN_IN, hidden, (request, reply) =>
    viewerOf(request)
      ? reply.redirect(OVERVIEW, 303)
      : render(reply, 'sign-in', { title: 'Sign in', name: '', error: null }),
  );

  app.post(SIGN_IN, hidden, async (request, reply) => {
    const name = field(request.body, 'name').trim().toLowerCase();
    const password = field(request.body, 'password');
    // Both budgets count the attempt before the password is checked (scrypt takes a while): guesses
    // sent together cannot all pass before the first failure is counted. A success gives both back.
    const byAddress = await deps.authFailures.attempt(request, 'console');
    const possible = ADMIN_NAME.test(name);
    const knownAs = possible ? devices.knownAs(request.cookies[deps.cookies.known], name) : null;
    const byName = possible ? await deps.limiter.hit(budgetKey(name, knownAs)) : null;
    if (byName !== null && byName.used > SIGN_IN_FAILURES_PER_NAME_PER_MINUTE) {
      // Refused before any check: not a failure of this address.
      await byAddress.succeeded();
      const retryAfter = Math.max(Math.ceil((byName.resetAt - Date.now()) / 1000), 1);
      throw new AppError(
        'rate-limited',
        `Too many failed sign-ins for this name. Retry after ${retryAfter} s.`,
        {},
        { 'retry-after': String(retryAfter) },
      );
    }
    // A name no user can have is refused without a look-up, and without a per-name count (whose key it would be).
    const user = possible ? await checkSignIn(deps.store, name, password) : null;
    if (user === null) {
      // A name no user can have may be anything (a password typed in the wrong field): not logged.
      request.log.warn(
        { console_user: possible ? name : null, client_address: clientBucket(request.ip) },
        'console sign-in refused',
      );
      return render(reply.code(401), 'sign-in', {
        title: 'Sign in',
        name,
        error: 'Wrong name or password, or the user is disabled.',
      });
    }
    await byAddress.succeeded();
    await deps.limiter.giveBack(budgetKey(name, knownAs), byName!);
    // This browser is now known for the name (a persistent cookie, unlike the session's).
    const known = devices.remember(request.cookies[deps.cookies.known], name);
    reply.setCookie(deps.cookies.known, known, {
      path: deps.cookies.path,
      secure: deps.secureCookies,
      httpOnly: true,
      sameSite: 'strict',
      maxAge: KNOWN_DEVICE_MAX_AGE_S,
    });
    return startSession(request, reply, { user: user.name, workspace: user.workspace, credential: null });
  });

  app.post('/console/sign-in/token', hidden, async (request, reply) => {
    await deps.authFailures.refuseIfThrottled(request, 'console');
    const credential = await checkTokenSignIn(deps.store, field(request.body, 'token').trim());
    if (credential === null) {
      await deps.authFailures.recordFailure(request, 'console');
      request.log.warn({ client_address: clientBucket(request.ip) }, 'console sign-in refused');
      return render(reply.code(401), 'sign-in', {
        title: 'Sign in',
        name: '',
        error: 'That is not a live personal admin token.',
      });
    }
    return startSession(request, reply, { user: credential.name, workspace: null, credential: credential.id });
  });

  async function startSession(
    request: FastifyRequest,
    reply: FastifyReply,
    who: { user: string; workspace: string | null; credential: string | null },
  ) {
    // A new session id at sign-in: an id planted in the browser before cannot ride into the session.
    await request.session.regenerate();
    Object.assign(request.session, who);
    // A new CSRF secret too: a token taken from a page before sign-in (by anyone who saw that page) is
    // not good for the signed-in person's forms. Forgetting the old cookie makes generateCsrf set a new one.
    delete request.cookies[deps.cookies.csrf];
    reply.generateCsrf();
    await deps.sessions.sweep();
    request.log.info(
      { console_user: who.user, with: who.credential === null ? 'password' : 'admin token' },
      'console sign-in',
    );
    return reply.redirect(OVERVIEW, 303);
  }

  app.post('/console/sign-out', hidden, async (request, reply) => {
    const viewer = viewerOf(request);
    // The row goes: the cookie the browser still holds names nothing, on every replica.
    if (viewer) await request.session.destroy();
    if (viewer) request.log.info({ console_user: viewer.name }, 'console sign-out');
    // The same attributes as the cookie it clears: a browser ignores a __Host- cookie set without Secure.
    return reply
      .clearCookie(deps.cookies.session, {
        path: deps.cookies.path,
        secure: deps.secureCookies,
        httpOnly: true,
        sameSite: 'lax',
      })
      .redirect(SIGN_IN, 303);
  });

  routes.get(OVERVIEW, { schema: { hide: true, querystring: OverviewQuerySchema } }, async (request, reply) => {
    const viewer = signedIn(request, reply);
    if (viewer === null) return reply;
    const query = request.query;
    const { rows, fleet } = await integrationsOverview({ ...migration, rules: deps.rules.current() }, viewer, query);
    const workspaces = [...deps.rules.current().workspaces.values()].filter(
      (w) => viewer.workspace === null || w.slug === viewer.workspace,
    );
    return render(reply, 'integrations', {
      title: 'Integrations',
      rows,
      fleet,
      query,
      workspaces,
      columns: SORT_COLUMNS,
    });
  });

  /** What an integration's page shows: every read it makes. */
  async function integrationPage(integration: Integration, extra: IntegrationExtras = {}, asked?: ChartRange) {
    // The leads it lists and a count: what the page reads is bounded by what it shows.
    const report = await migrationReport(migration, integration, undefined, {
      ...FULL_REPORT,
      unlinked: UNLINKED_LEADS_SHOWN,
    });
    const now = new Date();
    const keys = await listKeys(deps.store, integration);
    // Every window fits one page: the rules' and the stored ones are capped together.
    const brownoutWindows = (await listBrownouts(migration, integration, { limit: BROWNOUTS_PAGE_MAX })).items;
    const audit = await listAudit(deps.store, integration, AUDIT_ENTRIES_SHOWN);
    // No range asked for: the widest is read, and the shortest range that covers its calls is drawn.
    const usage = await deps.store.snapshot((r) =>
      r.states.usagePerHour(integration.id, rangeStartHour(asked ?? WIDEST_RANGE, now)),
    );
    const range = asked ?? defaultRange(usage, now);
    const chart = chartModel(bucketUsage(usage, range, now), range);
    return {
      title: integration.name,
      integration,
      report,
      keys,
      brownoutWindows,
      brownoutMinutesMax: BROWNOUT_MINUTES_MAX,
      audit,
      chart,
      unlinkedShown: UNLINKED_LEADS_SHOWN,
      issued: [],
      notice: null,
      refusal: null,
      ...extra,
    };
  }

  /** An integration's page; an action's refusal renders it too, with what the action has to say. */
  const showIntegration = async (
    reply: FastifyReply,
    integration: Integration,
    extra: IntegrationExtras = {},
    asked?: ChartRange,
  ) => render(reply, 'integration', await integrationPage(integration, extra, asked));

  /** A confirmation step (actions.ts): the consequence named, the same form again with confirm=yes, and a way back. */
  const confirm = (reply: FastifyReply, step: ConfirmStep) => render(reply, 'confirm', { title: step.heading, step });

  routes.get(
    '/console/integrations/:integration',
    { schema: { hide: true, params: ConsoleIntegrationParamsSchema, querystring: IntegrationPageQuerySchema } },
    async (request, reply) => {
      const viewer = signedIn(request, reply);
      if (viewer === null) return reply;
      const integration = integrationForViewer(deps.rules.current(), viewer, request.params.integration);
      // The key an action just issued, shown by this page once: cleared only once the page has rendered,
      // so that a read that fails on the way (a 503 while the store blips) leaves it for the next page of
      // the session. One for another integration (a second tab opened before the redirect was followed)
      // waits for that integration's page.
      const mine = await flashes.peek(request, integration.id);
      const html = await rendered(
        reply,
        'integration',
        await integrationPage(integration, { issued: mine }, request.query.range),
      );
      if (mine.length > 0) await flashes.shown(request, mine);
      return reply.type('text/html; charset=utf-8').send(html);
    },
  );

  // The answers 404s page by page, with the admin API's cursor (GET .../not-found); a cursor that is not one is a 400 page.
  routes.get(
    '/console/integrations/:integration/not-found',
    { schema: { hide: true, params: ConsoleIntegrationParamsSchema, querystring: NotFoundPageQuerySchema } },
    async (request, reply) => {
      const viewer = signedIn(request, reply);
      if (viewer === null) return reply;
      const integration = integrationForViewer(deps.rules.current(), viewer, request.params.integration);
      const page = await notFoundAnswers(migration, integration, {
        limit: NOT_FOUND_PAGE_DEFAULT,
        after: request.query.after,
      });
      return render(reply, 'not-found', {
        title: `Answers 404s · ${integration.name}`,
        integration,
        page,
        limit: NOT_FOUND_PAGE_DEFAULT,
      });
    },
  );

  // The porting guide as the bot author reads it (src/porting/), each v1 example with a copy button.
  routes.get(
    '/console/integrations/:integration/porting-guide',
    { schema: { hide: true, params: ConsoleIntegrationParamsSchema } },
    async (request, reply) => {
      const viewer = signedIn(request, reply);
      if (viewer === null) return reply;
      const integration = integrationForViewer(deps.rules.current(), viewer, request.params.integration);
      const guide = await portingGuide(migration, integration);
      return render(reply, 'porting-guide', { title: `Porting guide · ${integration.name}`, integration, guide });
    },
  );

  consoleActions(app, { ...migration, rules: deps.rules }, { signedIn, showIntegration, confirm, flash: flashes });
  answerRoutes(app, deps, { signedIn });
  leadRoutes(app, deps, { signedIn });
  testMatchRoutes(app, deps, { signedIn });
  webhookPages(app, deps, { signedIn });

  routes.post(
    '/console/integrations/:integration/relink',
    { schema: { hide: true, params: ConsoleIntegrationParamsSchema } },
    async (request, reply) => {
      const viewer = signedIn(request, reply)!;
      const integration = integrationForViewer(deps.rules.current(), viewer, request.params.integration);
      refuseUnlessServiceTeam(viewer);
      // Audited under the signed-in person's name, as the admin API audits under its credential's.
      await relinkLegacyLeads(migration, integration, { actor: viewer.name, reason: 'console' });
      return reply.redirect(`/console/integrations/${encodeURIComponent(integration.handle)}`, 303);
    },
  );
}
