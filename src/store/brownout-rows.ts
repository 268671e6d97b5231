// A stored brownout window's row, as both engines hand it over, and its record.
import type { StoredBrownout } from './repos/brownouts.js';

export interface BrownoutRow {
  id: string;
  integration_id: string;
  start_at: string;
  minutes: number;
  end_at: string;
  created_by: string;
  created_at: string;
}

export const rowToBrownout = (r: BrownoutRow): StoredBrownout => ({
  id: r.id,
  integrationId: r.integration_id,
  start: r.start_at,
  minutes: Number(r.minutes),
  end: r.end_at,
  createdBy: r.created_by,
  createdAt: r.created_at,
});

/** The values of `brownouts.insert`, in the order of its parameters. */
export const brownoutValues = (w: StoredBrownout): unknown[] => [
  w.id,
  w.integrationId,
  w.start,
  w.minutes,
  w.end,
  w.createdBy,
  w.createdAt,
];
