// Brownout windows set through the admin API, the CLI or the console (docs/runbook.md, "2b. Brownouts"),
// beside the rules' own: one row per window, deleted when cancelled, and by retention once long ended.

export interface StoredBrownout {
  id: string;
  integrationId: string;
  /** When the window starts (ISO, UTC, milliseconds). */
  start: string;
  minutes: number;
  /** `start` plus `minutes` (ISO, UTC): what the calendar and retention read. */
  end: string;
  createdBy: string;
  createdAt: string;
}

export interface BrownoutRepo {
  /** The integration's windows, the earliest first. */
  list(integrationId: string): Promise<StoredBrownout[]>;
  insert(window: StoredBrownout): Promise<void>;
  /** Deletes one window of the integration; false when it has none of that id. */
  remove(integrationId: string, id: string): Promise<boolean>;
  /** Windows of every integration that start or end in (since, until], the earliest start first. */
  between(since: string, until: string): Promise<StoredBrownout[]>;
  /** Deletes at most `limit` windows that ended before `before`, the oldest first; returns how many. */
  deleteEndedBefore(before: string, limit: number): Promise<number>;
}
