// What both engines make of a claimed delivery's row: the delivery, its event, its address and the
// secrets that sign it (the previous one only while its overlap lasts).
import type { ClaimedDelivery } from './repos/webhooks.js';
import { rowToDelivery, type ClaimedRow } from './webhook-rows.js';

export const rowToClaimed = (r: ClaimedRow, now: string): ClaimedDelivery => ({
  delivery: rowToDelivery(r),
  event: {
    id: r.event_id,
    type: r.type,
    workspaceId: r.workspace_id,
    payload: r.payload,
    createdAt: r.event_created_at,
  },
  url: r.url,
  secrets:
    r.previous_secret !== null && r.previous_secret_until !== null && r.previous_secret_until > now
      ? [r.secret, r.previous_secret]
      : [r.secret],
});
