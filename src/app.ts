// buildApp(config, deps): the whole gateway as a Fastify instance, ready to inject, never listening.
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { validatorCompiler } from 'fastify-type-provider-zod';
import { responseSerializer } from './http/serializer.js';
import { CONNECTION_DEFAULTS, type Config } from './config.js';
import type { Store } from './store/store.js';
import { AppError, BODY_LIMIT_DEFAULT_BYTES, registerErrorHandling, sendProblem } from './errors.js';
import { storeOutage } from './outage.js';
import type { RulesHolder } from './rules/loader.js';
import { registerRequestLogging } from './logging.js';
import { refuseRepeatedCredentials } from './http/credential-headers.js';
import { refuseNulInUrl } from './http/nul-in-url.js';
import { registerJsonParser } from './http/json-body.js';
import { healthRoutes } from './http/health.js';
import { intakeRoutes } from './intake/routes.js';
import { adminRoutes } from './admin/routes.js';
import { migrationRoutes } from './admin/migration-routes.js';
import { rulesRoutes } from './admin/rules-routes.js';
import { scheduleRoutes } from './admin/schedule-routes.js';
import { webhookRoutes } from './admin/webhook-routes.js';
import { brownoutRoutes } from './admin/brownout-routes.js';
import { startScheduleRunner, type ScheduleTestHooks } from './migration/schedule.js';
import { READINESS_EVERY_MS } from './migration/calendar.js';
import { shareRules, type RulesAcrossReplicas } from './rules/replicas.js';
import { legacyRoutes } from './legacy/routes.js';
import { docsRoutes } from './http/docs-routes.js';
import { registerOpenApi } from './openapi.js';
import { declareProblems } from './http/problem-responses.js';
import {
  createMetrics,
  registerMetrics,
  registerRoundTrips,
  registerRulesInfo,
  registerWebhookBacklog,
  type Metrics,
} from './http/metrics.js';
import { startWebhookSender, type Sender, type SenderOptions } from './webhooks/sender.js';
import { createUsageRecorder, type UsageRecorder } from './migration/usage.js';
import { createMemoryLimiters } from './rate-limit/memory-limiter.js';
import type { RateLimiters } from './rate-limit/limiter.js';
import { createIntegrationQuota } from './rate-limit/quota.js';
import { createAuthFailureGuard } from './rate-limit/auth-failures.js';
import { guardConnections, serverOptions, setAnswered } from './http/http-server.js';
import { DEFAULT_SHARED_TOKEN_NAME } from './admin/credentials.js';
import { DEMO_KEY_HASHES } from './demo.js';
import { consolePlugin } from './console/plugin.js';
import { SESSION_IDLE_MS, SESSION_MAX_MS } from './console/session-store.js';
import { startRetention } from './retention/retention.js';
import { VERSION } from './version.js';

export interface AppDeps {
  store: Store;
  rules: RulesHolder;
  /** Call counters; one is made over `store` when omitted. */
  usage?: UsageRecorder;
  /** Prometheus metrics; a fresh registry when omitted. */
  metrics?: Metrics;
  /** A pino logger; omitted in tests that do not read logs. */
  logger?: FastifyBaseLogger;
  /** The rate-limit counters (shared through PostgreSQL by main.ts); this process's memory when omitted. Closed with the app. */
  limiters?: RateLimiters;
  /** The rules as recorded for, and reloaded by, every replica (main.ts: SIGHUP uses it too); made over `store` when omitted. Closed with the app. */
  sharedRules?: RulesAcrossReplicas;
  /** How long without a refusal before a store outage may end (outage.ts's OUTAGE_QUIET_MS when omitted). */
  outageQuietMs?: number;
}

/** The largest body any route reads; the v1 and legacy writes set lower limits of their own. */
export const BODY_LIMIT_BYTES = BODY_LIMIT_DEFAULT_BYTES;

/** Requests a minute per integration when neither the config nor the integration's rules say. */
const DEFAULT_RATE_LIMIT_PER_MINUTE = 600;

/** Failed authentications a minute per client address when the config does not say. */
const DEFAULT_AUTH_FAILURES_PER_MINUTE = 30;

/** Seconds a client told "shutting down" should wait before it retries (another replica, or this one restarted). */
const SHUTDOWN_RETRY_AFTER_S = 5;

export async function buildApp(
  config: Pick<Config, 'adminToken'> &
    Partial<
      Pick<
        Config,
        | 'upstream'
        | 'rateLimitPerMinute'
        | 'authFailuresPerMinute'
        | 'checkResponses'
        | 'connections'
        | 'adminTokenName'
        | 'demo'
        | 'trustProxy'
        | 'console'
        | 'retention'
        | 'webhookAllowHttpHosts'
        | 'webhookAllowAddresses'
        | 'webhookSendEveryMs'
      >
    > & {
      scheduleEveryMs?: number;
      scheduleTestHooks?: ScheduleTestHooks;
      /** The sender's bounds, attempt timeout and retry schedule, when not its own (tests shorten them). */
      webhookSender?: Omit<SenderOptions, 'everyMs' | 'allowHttpHosts' | 'allowAddresses'>;
    },
  deps: AppDeps,
): Promise<FastifyInstance> {
  const connections = config.connections ?? CONNECTION_DEFAULTS;
  const app = Fastify({
    // Timeouts, the connection cap and problems for what Node refuses on the socket (http-server.ts).
    ...serverOptions(connections),
    loggerInstance: deps.logger,
    // Fastify's two lines per request are replaced by one richer line (logging.ts).
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    bodyLimit: BODY_LIMIT_BYTES,
    routerOptions: { ignoreTrailingSlash: true },
    // Only the named proxies are believed: X-Forwarded-For from anyone else is ignored (request.ip is
    // the socket address), so a client cannot choose the address its failures are counted under.
    ...(config.trustProxy ? { trustProxy: config.trustProxy } : {}),
  });
  guardConnections(app, connections);
  // JSON only: Fastify's built-in text/plain parser would hand a string to the schema (422, not 415).
  app.removeContentTypeParser('text/plain');
  registerJsonParser(app);
  app.setValidatorCompiler(validatorCompiler);
  // Checked against the schemas unless the server runs with RESPONSE_CHECKS=off (serializer.ts).
  app.setSerializerCompiler(responseSerializer(config.checkResponses ?? true));

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    // A new request on a kept-alive connection: the previous one's body has arrived in full.
    setAnswered(request.raw.socket, false);
  });
  // A route that needs a body gets 415 for a request without a JSON one (Fastify would pass undefined on).
  app.addHook('preValidation', async (request) => {
    const schema = request.routeOptions.schema?.body as
      { safeParse?: (v: unknown) => { success: boolean } } | undefined;
    if (schema !== undefined && request.body === undefined && !schema.safeParse?.(undefined).success) {
      throw new AppError('unsupported-media-type', 'Send a JSON body with Content-Type: application/json.');
    }
  });
  // Draining: Node's server.close() reaps only connections idle at that moment, so a request in
  // flight at SIGTERM would leave its keep-alive connection open for the 72 s keep-alive timeout.
  // Once closing, every response asks the client to close, and close() completes when they finish.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', async (_request, reply) => {
    if (closing) reply.header('connection', 'close');
  });
  // A response sent before the body arrived in full (a 401 or 429 refused unread) keeps the connection:
  // closing it with the body still coming makes the kernel reset it, and clients (undici among them)
  // then report a write error instead of the answer. Node reads and drops the rest of the body; a
  // client that trickles it is cut at the request timeout, without a second answer (http-server.ts).
  app.addHook('onResponse', async (request) => {
    if (request.raw.complete === false) setAnswered(request.raw.socket, true);
  });
  // A request that arrives on an open connection while draining is not started: it is told to retry.
  app.addHook('onRequest', async (_request, reply) => {
    if (closing)
      return sendProblem(
        reply,
        'service-unavailable',
        'The gateway is shutting down; retry shortly.',
        {},
        { 'retry-after': String(SHUTDOWN_RETRY_AFTER_S) },
      );
  });
  const metrics = deps.metrics ?? createMetrics();
  const outage = storeOutage({
    store: deps.store,
    log: app.log,
    refusals: metrics.storeUnavailable,
    ...(deps.outageQuietMs === undefined ? {} : { quietMs: deps.outageQuietMs }),
  });
  app.addHook('onClose', async () => outage.close());
  registerErrorHandling(app, outage);
  registerRequestLogging(app);
  refuseNulInUrl(app);
  refuseRepeatedCredentials(app);
  registerMethodNotAllowed(app);

  const usage =
    deps.usage ??
    createUsageRecorder(deps.store, undefined, undefined, app.log, (id) => deps.rules.current().findIntegration(id));
  const limiters = deps.limiters ?? createMemoryLimiters();
  const sharedRules =
    deps.sharedRules ?? (await shareRules({ replicas: deps.store.replicas, rules: deps.rules, log: app.log }));
  // The process's retention job (src/retention/), for a gateway given its settings (main.ts): started
  // once the app is ready, so an app whose building failed leaves no timer behind.
  let retention: ReturnType<typeof startRetention> | null = null;
  const retentionConfig = config.retention;
  if (retentionConfig) {
    app.addHook('onReady', async () => {
      retention = startRetention(
        deps.store,
        retentionConfig,
        { idleMs: SESSION_IDLE_MS, maxMs: SESSION_MAX_MS },
        app.log,
      );
    });
  }
  // Every replica looks for due switch-off schedules (src/migration/schedule.ts); one carries each out.
  let schedules: ReturnType<typeof startScheduleRunner> | null = null;
  app.addHook('onReady', async () => {
    schedules = startScheduleRunner(
      { store: deps.store, usage, rules: deps.rules },
      app.log,
      config.scheduleEveryMs,
      // Whether an integration became ready is looked at by a gateway given its background settings
      // (main.ts, as retention), once a minute.
      retentionConfig ? READINESS_EVERY_MS : Infinity,
      config.scheduleTestHooks,
    );
  });
  // Every replica of a gateway given its sending interval (main.ts) sends due webhook deliveries
  // (src/webhooks/sender.ts); tests that do not ask for it build a gateway that sends none.
  let sender: Sender | null = null;
  const sendEveryMs = config.webhookSendEveryMs;
  if (sendEveryMs !== undefined) {
    app.addHook('onReady', async () => {
      sender = startWebhookSender(
        { store: deps.store, log: app.log, results: metrics.webhookDeliveries },
        {
          ...config.webhookSender,
          everyMs: sendEveryMs,
          allowHttpHosts: config.webhookAllowHttpHosts ?? [],
          allowAddresses: config.webhookAllowAddresses ?? [],
        },
      );
    });
  }
  app.addHook('onClose', async () => {
    await sender?.stop();
    await schedules?.stop();
    await retention?.stop();
    sharedRules.close();
    await usage.close();
    await limiters.close();
    await deps.store.close();
  });

  // One quota and one failure count per gateway: v1, legacy and admin plugins share them.
  const quota = createIntegrationQuota(limiters, config.rateLimitPerMinute ?? DEFAULT_RATE_LIMIT_PER_MINUTE);
  const authFailures = createAuthFailureGuard(
    limiters.authFailures,
    config.authFailuresPerMinute ?? DEFAULT_AUTH_FAILURES_PER_MINUTE,
  );
  const services = { store: deps.store, rules: deps.rules, sharedRules, usage, metrics, authFailures };
  declareProblems(app);
  await registerOpenApi(app, VERSION);
  registerMetrics(app, metrics);
  registerRulesInfo(metrics, deps.rules, sharedRules);
  registerRoundTrips(metrics, deps.store);
  registerWebhookBacklog(metrics, deps.store);
  await app.register(healthRoutes(services));
  await app.register(docsRoutes);
  // Outside demo mode the published demo keys are refused even if a database holds them live.
  const refusedKeyHashes = config.demo ? new Set<string>() : DEMO_KEY_HASHES;
  await app.register(intakeRoutes({ ...services, quota, refusedKeyHashes }));
  await app.register(legacyRoutes({ ...services, upstream: config.upstream ?? null, quota, refusedKeyHashes }));
  if (config.adminToken !== undefined) {
    const admin = { adminToken: config.adminToken, adminTokenName: config.adminTokenName ?? DEFAULT_SHARED_TOKEN_NAME };
    await app.register(adminRoutes({ ...services, ...admin }));
    await app.register(migrationRoutes({ ...services, ...admin }));
    await app.register(rulesRoutes({ ...services, ...admin }));
    await app.register(scheduleRoutes({ ...services, ...admin }));
    await app.register(webhookRoutes({ ...services, ...admin, allowHttpHosts: config.webhookAllowHttpHosts ?? [] }));
    await app.register(brownoutRoutes({ ...services, ...admin }));
  }
  if (config.console) {
    await app.register(
      consolePlugin({
        ...services,
        outage,
        limiter: limiters.authFailures,
        sharedTokenName: config.adminTokenName ?? DEFAULT_SHARED_TOKEN_NAME,
        allowHttpHosts: config.webhookAllowHttpHosts ?? [],
        ...config.console,
      }),
    );
  }
  return app;
}

/** 404 for an unknown path; 405 with Allow for a known path asked with another method. */
function registerMethodNotAllowed(app: FastifyInstance): void {
  const routes: { pattern: RegExp; methods: Set<string> }[] = [];
  app.addHook('onRoute', (route) => {
    const source = route.url
      .replace(/\/+$/, '')
      .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
      .replace(/:[^/]+/g, '[^/]+');
    const pattern = new RegExp(`^${source}/?$`);
    let entry = routes.find((r) => r.pattern.source === pattern.source);
    if (!entry) routes.push((entry = { pattern, methods: new Set() }));
    for (const method of [route.method].flat()) entry.methods.add(method);
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const allowed = routes.filter((r) => r.pattern.test(path)).flatMap((r) => [...r.methods]);
    // A route that takes this method yet found nothing (a static file that is not there) is a 404.
    if (allowed.length > 0 && !allowed.includes(request.method)) {
      const allow = [...new Set(allowed)].sort().join(', ');
      return sendProblem(
        reply,
        'method-not-allowed',
        `${request.method} is not allowed here; allowed: ${allow}.`,
        {},
        { allow },
      );
    }
    return sendProblem(reply, 'not-found', `No route ${request.method} ${path}.`);
  });
}
