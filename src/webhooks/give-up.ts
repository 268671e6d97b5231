// An endpoint that failed for the whole retry period is disabled (docs/webhooks.md, "Disabling"): once
// a delivery is given up, if no delivery to its endpoint succeeded since that delivery was written,
// nothing more is written for it and nothing more is sent to it until the service team enables it.
import type { Repos } from '../store/store.js';
import type { ClaimedDelivery } from '../store/repos/webhooks.js';
import { auditEndpoint } from './endpoints.js';

/** The actor of the audit entries the sender writes. */
export const SENDER_ACTOR = 'webhooks';

/**
 * In the unit that records the given-up attempt: disables the endpoint, with its audit entry, unless a delivery to it succeeded since the given-up delivery was written (the retry period of
 * that delivery, longer for one that waited while its endpoint was paused) or it is disabled already. Answers the reason when it disabled it (the caller logs it once committed).
 */
export async function disableIfFailingThroughout(
  tx: Repos,
  given: ClaimedDelivery,
  at: string,
): Promise<string | null> {
  const { endpointId, createdAt, attempts } = given.delivery;
  if (await tx.webhooks.deliveredSince(endpointId, createdAt)) return null;
  // Serialised with the admin API's changes, which write every changeable column of the endpoint.
  await tx.locks.webhookEndpoints();
  const endpoint = await tx.webhooks.getEndpoint(endpointId);
  if (!endpoint || endpoint.disabledAt !== null) return null;
  const reason = `no delivery succeeded since ${createdAt}: event ${given.event.id} was given up after ${attempts + 1} attempts`;
  await tx.webhooks.updateEndpoint({ ...endpoint, disabledAt: at, disabledReason: reason, updatedAt: at });
  await auditEndpoint(tx, endpointId, 'webhook_endpoint_disabled', SENDER_ACTOR, at, {
    event_id: given.event.id,
    delivery_id: given.delivery.id,
    failing_since: createdAt,
  });
  return reason;
}
