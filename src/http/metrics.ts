// Prometheus metrics (prom-client): one registry per app, so tests and replicas never share counters.
import type { FastifyInstance } from 'fastify';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { RulesHolder } from '../rules/loader.js';
import type { RulesAcrossReplicas } from '../rules/replicas.js';
import { VERSION } from '../version.js';
import type { Store } from '../store/store.js';

export interface Metrics {
  registry: Registry;
  requests: Counter<'method' | 'route' | 'status'>;
  duration: Histogram<'method' | 'route'>;
  /** Outcomes of v1 events: created, attached, reactivated, answered, replayed, conflict. */
  events: Counter<'endpoint' | 'outcome'>;
  answers: Counter<'result'>;
  legacyCalls: Counter<'integration' | 'route'>;
  upstreamErrors: Counter<'kind'>;
  upstreamDuration: Histogram<'status'>;
  /** Requests answered 503 because the store failed (src/outage.ts), by the engine's code: an outage, not a fault of the gateway. */
  storeUnavailable: Counter<'engine_code'>;
  /** Webhook attempts recorded, by result: delivered, retry (due again), failed (given up). */
  webhookDeliveries: Counter<'result'>;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  // The process's own series under their standard names (process_*, nodejs_*), which stock dashboards
  // and alerts expect; the gateway's series keep the lead_gateway_ prefix (docs/operations/monitoring.md#metrics-and-alerts).
  collectDefaultMetrics({ register: registry });
  new Gauge({
    name: 'lead_gateway_build_info',
    help: 'The release and the Node.js version this process runs, as labels; always 1',
    labelNames: ['version', 'node'],
    registers: [registry],
  }).set({ version: VERSION, node: process.versions.node }, 1);
  const seconds = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
  return {
    registry,
    requests: new Counter({
      name: 'lead_gateway_http_requests_total',
      help: 'HTTP requests by route and status',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    }),
    duration: new Histogram({
      name: 'lead_gateway_http_request_duration_seconds',
      help: 'Time to answer, by route',
      labelNames: ['method', 'route'],
      buckets: seconds,
      registers: [registry],
    }),
    events: new Counter({
      name: 'lead_gateway_events_total',
      help: 'v1 events by endpoint and outcome (replayed, conflict and test calls included)',
      labelNames: ['endpoint', 'outcome'],
      registers: [registry],
    }),
    answers: new Counter({
      name: 'lead_gateway_answers_total',
      help: 'Answers by result',
      labelNames: ['result'],
      registers: [registry],
    }),
    legacyCalls: new Counter({
      name: 'lead_gateway_legacy_calls_total',
      help: 'Deprecated-interface calls by integration and route',
      labelNames: ['integration', 'route'],
      registers: [registry],
    }),
    upstreamErrors: new Counter({
      name: 'lead_gateway_upstream_errors_total',
      help: 'Upstream failures: timeout or unavailable',
      labelNames: ['kind'],
      registers: [registry],
    }),
    upstreamDuration: new Histogram({
      name: 'lead_gateway_upstream_duration_seconds',
      help: 'Forwarded requests, by answer status',
      labelNames: ['status'],
      buckets: seconds,
      registers: [registry],
    }),
    storeUnavailable: new Counter({
      name: 'lead_gateway_store_unavailable_total',
      help: "Requests answered 503 because the store could not commit or read, by the engine's code (a store outage; a fault of the gateway is a 500)",
      labelNames: ['engine_code'],
      registers: [registry],
    }),
    webhookDeliveries: new Counter({
      name: 'lead_gateway_webhook_deliveries_total',
      help: 'Webhook attempts this replica recorded, by result: delivered, retry (due again later), failed (given up)',
      labelNames: ['result'],
      registers: [registry],
    }),
  };
}

/**
 * `lead_gateway_rules_info{version="…"} 1`: the rules this replica runs; `lead_gateway_rules_versions_live`:
 * how many distinct versions the live replicas run (1 without drift), as recorded on the database.
 */
export function registerRulesInfo(
  metrics: Metrics,
  rules: Pick<RulesHolder, 'version'>,
  shared: Pick<RulesAcrossReplicas, 'recentSurvey'>,
): void {
  // A registry shared by two apps (tests) keeps the first one's gauges.
  if (metrics.registry.getSingleMetric('lead_gateway_rules_info')) return;
  new Gauge({
    name: 'lead_gateway_rules_info',
    help: 'The version (a hash of the files) of the rules in force, as a label; always 1',
    labelNames: ['version'],
    registers: [metrics.registry],
    collect() {
      this.reset();
      this.set({ version: rules.version().version }, 1);
    },
  });
  new Gauge({
    name: 'lead_gateway_rules_versions_live',
    help: 'Distinct rules versions among the live replicas: above 1 is drift; absent while the database cannot be asked',
    registers: [metrics.registry],
    async collect() {
      const survey = await shared.recentSurvey();
      this.reset();
      if (survey) this.set(survey.versions.length);
    },
  });
}

/**
 * `lead_gateway_postgres_round_trips_total`: the times this process waited for the PostgreSQL server
 * before it could send more (a statement sent while none of its connection's statements was in flight;
 * statements pipelined behind one in flight ride on its trip). Divided by the requests answered, the
 * round trips a request costs. Absent on SQLite.
 */
export function registerRoundTrips(metrics: Metrics, store: Pick<Store, 'roundTrips'>): void {
  const roundTrips = store.roundTrips?.bind(store);
  if (!roundTrips || metrics.registry.getSingleMetric('lead_gateway_postgres_round_trips_total')) return;
  let told = 0;
  new Counter({
    name: 'lead_gateway_postgres_round_trips_total',
    help: 'Round trips to PostgreSQL: statements sent while none of their connection was awaiting an answer',
    registers: [metrics.registry],
    collect() {
      const now = roundTrips();
      this.inc(now - told);
      told = now;
    },
  });
}

/** Counts every answered request from the route pattern (bounded label values, never raw URLs). */
export function registerMetrics(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.requests.inc({ method: request.method, route, status: String(reply.statusCode) });
    metrics.duration.observe({ method: request.method, route }, reply.elapsedTime / 1000);
    const context = reply.logContext;
    if (route.startsWith('/api/integrations/v1/')) {
      const endpoint = route.includes('answers') ? 'answers' : 'leads';
      if (reply.statusCode === 409) metrics.events.inc({ endpoint, outcome: 'conflict' });
      else if (typeof context?.outcome === 'string') metrics.events.inc({ endpoint, outcome: context.outcome });
    }
    const answers = context?.answers as Record<string, number> | undefined;
    // A replay wrote nothing now, and a test call nothing at all (docs/api.md, "Test mode").
    if (answers && context?.outcome !== 'replayed' && context?.outcome !== 'test') {
      for (const [result, n] of Object.entries(answers)) if (n > 0) metrics.answers.inc({ result }, n);
    }
    if (request.integration && route.startsWith('/api/bots/api/')) {
      metrics.legacyCalls.inc({ integration: request.integration.handle, route: `${request.method} ${route}` });
    }
  });
  app.get(
    '/metrics',
    { schema: { tags: ['operations'], summary: 'Prometheus metrics', produces: ['text/plain'] } },
    async (_request, reply) => reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
  );
}

/** How long a scrape's reading of the webhook backlog serves its two gauges. */
const BACKLOG_READ_REUSE_MS = 1_000;

/**
 * `lead_gateway_webhook_pending_deliveries` and `lead_gateway_webhook_oldest_pending_seconds`: the
 * deliveries not yet delivered nor given up, on every replica alike (one indexed query per scrape,
 * shared by both gauges); absent while the database cannot be asked.
 */
export function registerWebhookBacklog(metrics: Metrics, store: Pick<Store, 'readOne'>): void {
  if (metrics.registry.getSingleMetric('lead_gateway_webhook_pending_deliveries')) return;
  let last: { at: number; read: Promise<{ pending: number; oldestCreatedAt: string | null } | null> } | null = null;
  const read = () => {
    if (last === null || Date.now() - last.at > BACKLOG_READ_REUSE_MS)
      last = { at: Date.now(), read: store.readOne((r) => r.webhooks.backlog()).catch(() => null) };
    return last.read;
  };
  new Gauge({
    name: 'lead_gateway_webhook_pending_deliveries',
    help: 'Webhook deliveries pending (paused and disabled endpoints included): the backlog',
    registers: [metrics.registry],
    async collect() {
      const backlog = await read();
      this.reset();
      if (backlog) this.set(backlog.pending);
    },
  });
  new Gauge({
    name: 'lead_gateway_webhook_oldest_pending_seconds',
    help: 'Age of the oldest pending webhook delivery, in seconds; 0 when none is pending',
    registers: [metrics.registry],
    async collect() {
      const backlog = await read();
      this.reset();
      if (!backlog) return;
      const oldest = backlog.oldestCreatedAt === null ? null : Date.parse(backlog.oldestCreatedAt);
      this.set(oldest === null ? 0 : Math.max(0, (Date.now() - oldest) / 1000));
    },
  });
}
