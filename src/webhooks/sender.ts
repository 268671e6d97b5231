// The sender (docs/webhooks.md, "Delivery"): every replica claims due deliveries, sends each as one
// signed attempt and records its outcome; a bounded number in flight, fewer still per endpoint, so
// that an endpoint that hangs costs its own attempts' timeouts and holds up no other endpoint.
import type { FastifyBaseLogger } from 'fastify';
import type { Counter } from 'prom-client';
import { WEBHOOK_SEND_EVERY_MS } from '../config.js';
import type { Store } from '../store/store.js';
import type { AttemptOutcome, ClaimedDelivery } from '../store/repos/webhooks.js';
import { nextAttemptAt } from './backoff.js';
import { createDeliverer, DELIVERY_TIMEOUT_MS, type DelivererOptions, type DeliveryResult } from './deliver.js';
import { claimDue, recordAttempt } from './outbox.js';
import { disableIfFailingThroughout } from './give-up.js';

/** Attempts one replica has in flight at most, all endpoints together. */
export const SENDS_IN_FLIGHT_MAX = 16;
/** Attempts one replica has in flight at most to one endpoint. */
export const SENDS_PER_ENDPOINT_MAX = 4;
/** A claim outlasts its attempt by this much, so that a slow recording of the outcome keeps its claim. */
export const LEASE_MARGIN_MS = 20_000;
/** On close, attempts in flight are waited for this long at most (their own timeout if shorter), then ended. */
export const STOP_GRACE_MS = 5_000;

export interface SenderOptions extends Pick<DelivererOptions, 'allowHttpHosts' | 'allowAddresses' | 'resolve'> {
  everyMs?: number;
  inFlightMax?: number;
  perEndpointMax?: number;
  /** One attempt's deadline (DELIVERY_TIMEOUT_MS). */
  timeoutMs?: number;
  /** When attempt `attemptNumber`, failed at `now`, is tried again; null: given up (backoff.ts's schedule). */
  backoff?: (attemptNumber: number, now: Date) => Date | null;
}

export interface SenderDeps {
  store: Store;
  log: FastifyBaseLogger;
  /** Counts each recorded attempt's result: delivered, retry, failed. */
  results?: Counter<'result'>;
  now?: () => Date;
}

export interface Sender {
  /** Looks for due deliveries now (after the look under way, if any) rather than at the next interval. */
  poke(): void;
  /** Stops looking, waits for the attempts in flight within STOP_GRACE_MS, ends the rest (their claims lapse). */
  stop(): Promise<void>;
}

export function startWebhookSender(deps: SenderDeps, options: SenderOptions = {}): Sender {
  const everyMs = options.everyMs ?? WEBHOOK_SEND_EVERY_MS;
  const inFlightMax = options.inFlightMax ?? SENDS_IN_FLIGHT_MAX;
  const perEndpointMax = options.perEndpointMax ?? SENDS_PER_ENDPOINT_MAX;
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  const backoff = options.backoff ?? ((n: number, now: Date) => nextAttemptAt(n, now));
  const leaseMs = timeoutMs + LEASE_MARGIN_MS;
  const now = () => deps.now?.() ?? new Date();
  const replicaId = deps.store.replicas.self;
  const deliverer = createDeliverer({
    timeoutMs,
    ...(options.allowHttpHosts ? { allowHttpHosts: options.allowHttpHosts } : {}),
    ...(options.allowAddresses ? { allowAddresses: options.allowAddresses } : {}),
    ...(options.resolve ? { resolve: options.resolve } : {}),
  });

  const inFlight = new Set<Promise<void>>();
  let stopping = false;
  // Attempts ended by stop() are not recorded: their claims lapse and another look sends them again.
  let abandoned = false;
  let looking: Promise<void> = Promise.resolve();
  let lookQueued = false;

  const send = async (claimed: ClaimedDelivery): Promise<void> => {
    const at = now();
    const result = await deliverer.deliver(claimed.url, claimed.secrets, {
      id: claimed.event.id,
      timestampSeconds: Math.floor(at.getTime() / 1000),
      body: claimed.event.payload,
    });
    if (abandoned) return;
    const attemptNumber = claimed.delivery.attempts + 1;
    const outcome = outcomeOf(result, attemptNumber, now(), backoff);
    let disabled: string | null = null;
    const settled = await recordAttempt(
      deps.store,
      {
        deliveryId: claimed.delivery.id,
        at: at.toISOString(),
        statusCode: result.status,
        durationMs: result.durationMs,
        responseHead: result.status === null ? null : result.bodyHead,
        error: result.error === null ? null : `${result.error.code}: ${result.error.message}`,
      },
      outcome,
      replicaId,
      async (tx, held) => {
        disabled =
          held && outcome.status === 'failed'
            ? await disableIfFailingThroughout(tx, claimed, now().toISOString())
            : null;
      },
    );
    if (!settled) {
      deps.log.info({ delivery_id: claimed.delivery.id }, 'webhook attempt recorded after its claim lapsed');
      return;
    }
    deps.results?.inc({ result: outcome.status === 'pending' ? 'retry' : outcome.status });
    if (disabled !== null)
      deps.log.info(
        { endpoint_id: claimed.delivery.endpointId, event_id: claimed.event.id, reason: disabled },
        'webhook endpoint disabled: no delivery succeeded for the whole retry period',
      );
  };

  const look = async (): Promise<void> => {
    const free = inFlightMax - inFlight.size;
    if (stopping || free <= 0) return;
    const claimed = await claimDue(deps.store, free, replicaId, leaseMs, now(), perEndpointMax);
    for (const delivery of claimed) {
      const attempt: Promise<void> = send(delivery)
        .catch((error: unknown) =>
          deps.log.warn(
            { err: error, delivery_id: delivery.delivery.id },
            'recording a webhook attempt failed; the delivery is sent again once its claim lapses',
          ),
        )
        .finally(() => {
          inFlight.delete(attempt);
          // A place came free: the next due delivery need not wait for the interval.
          if (!stopping) poke();
        });
      inFlight.add(attempt);
    }
  };

  const poke = (): void => {
    if (lookQueued) return;
    lookQueued = true;
    looking = looking.then(() => {
      lookQueued = false;
      return look().catch((error: unknown) =>
        deps.log.warn({ err: error }, 'claiming webhook deliveries failed; the next look tries again'),
      );
    });
  };

  const timer = setInterval(poke, everyMs);
  timer.unref();
  return {
    poke,
    async stop() {
      stopping = true;
      clearInterval(timer);
      await looking;
      const grace = new Promise<void>((resolve) => setTimeout(resolve, Math.min(STOP_GRACE_MS, timeoutMs)).unref());
      await Promise.race([Promise.all(inFlight), grace]);
      abandoned = true;
      await deliverer.destroy();
      await Promise.all(inFlight);
    },
  };
}

/** Delivered on a 2xx; otherwise due again when the schedule says, or given up when it says no more. */
function outcomeOf(
  result: DeliveryResult,
  attemptNumber: number,
  at: Date,
  backoff: (attemptNumber: number, now: Date) => Date | null,
): AttemptOutcome {
  if (result.ok) return { status: 'delivered' };
  const next = backoff(attemptNumber, at);
  return next === null ? { status: 'failed' } : { status: 'pending', nextAttemptAt: next.toISOString() };
}
