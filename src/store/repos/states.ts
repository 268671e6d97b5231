// Migration state per integration, its audit log, and usage counters.

export type MigrationState = 'legacy' | 'migrating' | 'switched_off';
/** `v1-test`: calls authenticated by a v1 test key, counted apart from v1's (docs/api.md, "Test mode"). */
export type Interface = 'v1' | 'legacy' | 'v1-test';

export interface AuditEntry {
  id: string;
  integrationId: string;
  action: string;
  fromState: MigrationState | null;
  toState: MigrationState | null;
  actor: string;
  reason: string | null;
  details: Record<string, unknown> | null;
  at: string;
}

export interface UsageRow {
  route: string;
  interface: Interface;
  calls: number;
  lastSeen: string;
  /** Calls answered with a 2xx, and the last of them (null: none ever). */
  okCalls: number;
  lastOk: string | null;
}

/** One interface's calls in one UTC hour (`hour` as 'YYYY-MM-DDTHH'); test calls are not among them. */
export interface HourlyUsage {
  hour: string;
  interface: Exclude<Interface, 'v1-test'>;
  calls: number;
}

export interface UsageIncrement {
  integrationId: string;
  interface: Interface;
  route: string;
  hour: string;
  calls: number;
  lastSeen: string;
  okCalls: number;
  lastOk: string | null;
}

/**
 * The `hour` of the row that sums, per integration, interface and route, every hour retention rolled
 * up (src/retention/): before every real hour, so no count "since" an hour includes it, while the last
 * call and the last success (maxima over every row) stay as they were.
 */
export const USAGE_ROLLUP_HOUR = '0000-00-00T00';

/**
 * One redacted legacy call kept per integration and route for the porting guide (src/porting/): the
 * newest written wins. `sample` is already redacted; the raw body is never stored.
 */
export interface LegacySample {
  integrationId: string;
  route: string;
  at: string;
  sample: Record<string, unknown>;
}

export interface StateRepo extends PortingRepo {
  /** The stored state; an integration never moved is `legacy`. */
  get(integrationId: string): Promise<MigrationState>;
  set(integrationId: string, state: MigrationState, at: string): Promise<void>;
  addAudit(entry: AuditEntry): Promise<void>;
  listAudit(integrationId: string | null, limit: number): Promise<AuditEntry[]>;
  addUsage(increments: readonly UsageIncrement[]): Promise<void>;
  /** Calls per route since `sinceHour` (inclusive), with the last time each was seen (ever). */
  usageSince(integrationId: string, sinceHour: string): Promise<UsageRow[]>;
  /**
   * Calls per interface and hour from `sinceHour` (inclusive), hours in order; hours with no calls are
   * absent, and so are test calls (the console's chart draws the bot's live traffic).
   */
  usagePerHour(integrationId: string, sinceHour: string): Promise<HourlyUsage[]>;
  lastSeen(integrationId: string, iface: Interface): Promise<string | null>;
  /**
   * Sums the hourly rows before `beforeHour` into each route's USAGE_ROLLUP_HOUR row and deletes them,
   * the oldest hours first: at most `limit` rows, and the rest of the last hour reached. Returns how
   * many hourly rows were rolled up.
   */
  rollUpUsage(beforeHour: string, limit: number): Promise<number>;
  /**
   * Counts ignored member names; a name not counted before is added only while the integration has
   * fewer than `maxNames` (the report names members, it is not a store of whatever bots send).
   */
  countIgnored(integrationId: string, fields: readonly string[], at: string, maxNames: number): Promise<void>;
  ignoredFields(integrationId: string): Promise<{ field: string; calls: number; lastSeen: string }[]>;
  /** Deletes at most `limit` ignored names last seen before `before` (oldest first); returns how many. */
  deleteIgnoredBefore(before: string, limit: number): Promise<number>;
  /** Keeps each sample as its (integration, route)'s, unless the one stored is newer. */
  putSamples(samples: readonly LegacySample[]): Promise<void>;
  /** The samples of one integration, by route. */
  samples(integrationId: string): Promise<LegacySample[]>;
  /** Deletes at most `limit` samples taken before `before` (oldest first); returns how many. */
  deleteSamplesBefore(before: string, limit: number): Promise<number>;
}

/** An integration marked "ported" (docs/runbook.md, "Marking an integration ported"): beside its state, never a state. */
export interface PortedFlag {
  integrationId: string;
  at: string;
  by: string;
  note: string | null;
}

/** Answers calls answered 404 for one external_contact_id, counted in memory between two flushes. */
export interface NotFoundIncrement {
  integrationId: string;
  externalContactId: string;
  calls: number;
  firstAt: string;
  lastAt: string;
}

export type NotFoundEntry = Omit<NotFoundIncrement, 'integrationId'>;

/** Where a page of 404s ends: the last entry's `lastAt` and id (pages run newest first). */
export interface NotFoundCursor {
  lastAt: string;
  externalContactId: string;
}

/** Legacy calls refused in one brownout window on one route, to add to what is counted. */
export interface BrownoutRefusal {
  integrationId: string;
  /** The window's start, as the rules give it (ISO, UTC). */
  windowStart: string;
  route: string;
  calls: number;
  lastAt: string;
}

/** The ported flag, the answers 404s and brownout refusals: state and usage data beside those of StateRepo. */
export interface PortingRepo {
  ported(integrationId: string): Promise<PortedFlag | null>;
  allPorted(): Promise<PortedFlag[]>;
  /** Sets the flag; false (and nothing written) when the integration is marked already. */
  setPorted(flag: PortedFlag): Promise<boolean>;
  /** false when it was not marked. */
  clearPorted(integrationId: string): Promise<boolean>;
  /**
   * Adds the counts; an id not counted before is added only while the integration has fewer than
   * `maxIds` (the list is for the service team to act on, not a store of whatever bots send).
   * Answers the ids the lists gained: those added, not those counted again or past the cap.
   */
  countNotFound(increments: readonly NotFoundIncrement[], maxIds: number): Promise<NotFoundIncrement[]>;
  /** One page, the latest 404 first (ties by id, descending), after `after`. */
  notFound(integrationId: string, limit: number, after: NotFoundCursor | null): Promise<NotFoundEntry[]>;
  notFoundTotals(integrationId: string): Promise<{ ids: number; calls: number }>;
  /** Deletes at most `limit` entries whose last 404 is before `before`, the oldest first; returns how many. */
  deleteNotFound(before: string, limit: number): Promise<number>;
  /** Adds the counts; a row (window and route) not counted before is added only while the integration has fewer than `maxRows`. */
  countBrownoutRefusals(refusals: readonly BrownoutRefusal[], maxRows: number): Promise<void>;
  /** The integration's counted refusals, by window start and route, at most `limit` rows. */
  brownoutRefusals(integrationId: string, limit: number): Promise<Omit<BrownoutRefusal, 'integrationId'>[]>;
  /** Deletes at most `limit` rows of windows that started before `before`, the oldest first; returns how many. */
  deleteBrownoutRefusals(before: string, limit: number): Promise<number>;
}
