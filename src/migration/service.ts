// The service team's controls (docs/runbook.md, docs/migration.md): keys, migration state, switch-off and rollback, audit.
import type { Repos, Store } from '../store/store.js';
import { AppError } from '../errors.js';
import type { Integration } from '../rules/catalog.js';
import type { ApiKey } from '../store/repos/keys.js';
import { hashKey, legacyKeyPrefix, storeKey, type IssuedKey } from './keys.js';
import { forgetHotReads } from '../store/hot-reads.js';
import type { MigrationState } from '../store/repos/states.js';
import type { Lead } from '../store/repos/leads.js';
import type { UsageRecorder } from './usage.js';
import { renderExternalId } from '../lead/external-id.js';
import { newId } from '../store/ids.js';
import type { SwitchOffSchedule } from '../store/repos/schedules.js';
import { aboutIntegration, writeEvent } from '../webhooks/outbox.js';
import type { StoredBrownout } from '../store/repos/brownouts.js';

/**
 * Runs a change to an integration's keys or migration state, holding the integration's lock: its
 * changes read the state and then set it, so two of them run one after the other, and each audit row
 * says the move that happened. Requests remember keys and states (store/hot-reads.ts); they are
 * forgotten once the change has committed, here and (before this answers) in every other live
 * process on the database, so the next request anywhere sees it.
 */
export async function commitChange<T>(store: Store, integrationId: string, fn: (tx: Repos) => Promise<T>): Promise<T> {
  let result: T;
  try {
    result = await store.transact(async (tx) => {
      await tx.locks.integration(integrationId);
      return fn(tx);
    });
  } finally {
    forgetHotReads(store);
  }
  // Committed whatever this finds: a process it could not reach is named in the store's log.
  await store.awaitChangeSeen().catch(() => []);
  return result;
}

export interface MigrationDeps {
  store: Store;
  usage: UsageRecorder;
  now?: () => Date;
}

export const DEFAULT_QUIET_PERIOD_HOURS = 24;

export interface Actor {
  actor: string;
  reason?: string | null;
}

export async function move(
  tx: Repos,
  integration: Pick<Integration, 'id'>,
  action: string,
  to: MigrationState | null,
  who: Actor,
  at: string,
  details: Record<string, unknown> | null = null,
): Promise<MigrationState> {
  const from = await tx.states.get(integration.id);
  if (to !== null && to !== from) await tx.states.set(integration.id, to, at);
  await tx.states.addAudit({
    id: newId(),
    integrationId: integration.id,
    action,
    fromState: from,
    toState: to ?? from,
    actor: who.actor,
    reason: who.reason ?? null,
    details,
    at,
  });
  return to ?? from;
}

/**
 * Ends a pending schedule as cancelled, in the caller's unit, audited: a rollback and a change that
 * makes it moot (the integration switched off by hand) call it too.
 */
export async function endSchedule(
  tx: Repos,
  integration: Pick<Integration, 'id'>,
  schedule: SwitchOffSchedule,
  why: string,
  at: string,
  who: Actor,
): Promise<SwitchOffSchedule> {
  const cancelled: SwitchOffSchedule = { ...schedule, status: 'cancelled', lastRefusal: why };
  await tx.schedules.put(cancelled);
  await move(tx, integration, 'switch_off_schedule_cancelled', null, who, at, { at: schedule.at, why });
  return cancelled;
}

/**
 * Cancels, in the caller's unit, the integration's stored brownout windows that have not ended at
 * `at`, each audited `brownout_cancelled`: a switch-off (a brownout never runs on a switched-off
 * integration) and a rollback call it. Windows that ended stay, as the report's history.
 */
export async function cancelStoredBrownouts(
  tx: Repos,
  integration: Pick<Integration, 'id'>,
  why: string,
  at: string,
  who: Actor,
): Promise<StoredBrownout[]> {
  const open = (await tx.brownouts.list(integration.id)).filter((w) => w.end > at);
  for (const w of open) {
    await tx.brownouts.remove(integration.id, w.id);
    await move(tx, integration, 'brownout_cancelled', null, who, at, { id: w.id, start: w.start, end: w.end, why });
  }
  return open;
}

/** Audits an action that changes no state (applying stored answers, say) under `who`, in the caller's unit. */
export async function recordAction(
  tx: Repos,
  integration: Pick<Integration, 'id'>,
  action: string,
  who: Actor,
  at: string,
  details: Record<string, unknown> | null = null,
): Promise<void> {
  await move(tx, integration, action, null, who, at, details);
}

/** Why a legacy lead could not be linked, as a code to count by and words to act on. */
export type UnlinkedCode = 'no_rule' | 'missing_member' | 'bound_to_another_person';

/**
 * The unlinked leads a link run names, the first in the store's order; the others are counted, in all
 * and by code: what a run answers does not grow with the legacy leads.
 */
export const LINK_REPORT_UNLINKED_ITEMS = 100;

export interface LinkReport {
  linked: number;
  /** The first LINK_REPORT_UNLINKED_ITEMS of the leads left unlinked. */
  unlinked: { lead_id: string; code: UnlinkedCode; reason: string }[];
  unlinkedTotal: number;
  unlinkedByCode: Record<UnlinkedCode, number>;
}

function leaveUnlinked(report: LinkReport, item: LinkReport['unlinked'][number]): void {
  report.unlinkedTotal++;
  report.unlinkedByCode[item.code]++;
  if (report.unlinked.length < LINK_REPORT_UNLINKED_ITEMS) report.unlinked.push(item);
}

/**
 * The legacy-created leads not linked yet, each with the external_contact_id its legacy rule gives it
 * (null: no rule, or a member missing), for linking to bind. The 404 list reads only those of its ids
 * (porting.ts).
 */
async function unlinkedLegacyLeads(
  r: Pick<Repos, 'leads'>,
  integration: Integration,
): Promise<{ lead: Lead; externalId: string | null }[]> {
  const template = integration.legacy.externalContactId;
  return (await r.leads.listLegacy(integration.id, true)).map((lead) => ({
    lead,
    externalId: template === null ? null : renderExternalId(template, lead),
  }));
}

/** Binds each legacy-created lead's person to the integration through its legacy rule. */
async function linkLegacyLeads(tx: Repos, integration: Integration, at: string): Promise<LinkReport> {
  const report: LinkReport = {
    linked: 0,
    unlinked: [],
    unlinkedTotal: 0,
    unlinkedByCode: { no_rule: 0, missing_member: 0, bound_to_another_person: 0 },
  };
  const template = integration.legacy.externalContactId;
  const leads = await unlinkedLegacyLeads(tx, integration);
  // The bindings are made under their person locks, all taken at once: a lead submitted meanwhile with
  // one of these external_contact_ids waits, then finds the binding (intake/service.ts).
  const keys = leads.flatMap(({ externalId }) =>
    externalId === null ? [] : [{ kind: 'binding' as const, integrationId: integration.id, externalId }],
  );
  await tx.locks.persons(integration.workspace.id, keys);
  for (const { lead, externalId } of leads) {
    if (externalId === null) {
      leaveUnlinked(
        report,
        template === null
          ? { lead_id: lead.id, code: 'no_rule', reason: 'the integration has no legacy.external_contact_id rule' }
          : { lead_id: lead.id, code: 'missing_member', reason: `the lead lacks a member of ${template}` },
      );
      continue;
    }
    const bound = await tx.contacts.findByBinding(integration.id, externalId);
    if (bound && bound.id !== lead.contactId) {
      leaveUnlinked(report, {
        lead_id: lead.id,
        code: 'bound_to_another_person',
        reason: `${externalId} is already bound to another person`,
      });
      continue;
    }
    // Not bound now though the look-up found no binding: someone bound it without its person lock.
    if (!(await tx.contacts.bind(integration.id, externalId, lead.contactId, at)) && bound === null) {
      throw new Error(`external_contact_id ${externalId} was bound by a unit that did not lock it`);
    }
    report.linked++;
  }
  return report;
}

/** Imports an existing legacy key, by value or by its SHA-256 hex hash, so unchanged bots keep working. */
export async function importLegacyKey(
  deps: MigrationDeps,
  integration: Integration,
  input: { key?: string | undefined; hash?: string | undefined } & Actor,
): Promise<ApiKey> {
  const at = (deps.now?.() ?? new Date()).toISOString();
  const hash = input.key !== undefined ? hashKey(input.key) : input.hash!.toLowerCase();
  return commitChange(deps.store, integration.id, async (tx) => {
    const key: ApiKey = {
      id: newId(),
      integrationId: integration.id,
      kind: 'legacy',
      prefix: input.key !== undefined ? legacyKeyPrefix(input.key) : `sha256:${hash.slice(0, 8)}`,
      hash,
      createdAt: at,
      createdBy: input.actor,
      revokedAt: null,
    };
    // The check is the insert: of two imports of one key at once, the database lets exactly one in.
    if (!(await tx.keys.insert(key))) throw new AppError('conflict', 'This key is already known to the gateway.');
    await move(tx, integration, 'legacy_key_imported', null, input, at, { key_id: key.id, prefix: key.prefix });
    return key;
  });
}

export interface IssueResult extends IssuedKey {
  state: MigrationState;
  links: LinkReport;
}

/**
 * Step 1 of docs/runbook.md: the additional v1 key. Moves legacy -> migrating and links legacy-created leads.
 * `secret` is for demo mode's published key only; every other key is generated.
 */
/**
 * What an interface does with a key in the unit that issues it (the console keeps it for the page
 * that shows it): the key stands only if that stands too.
 */
export type WithIssued = (tx: Repos, issued: IssuedKey & { revoked?: number }) => Promise<void>;

export async function issueV1Key(
  deps: MigrationDeps,
  integration: Integration,
  who: Actor,
  options: { secret?: string; within?: WithIssued } = {},
): Promise<IssueResult> {
  const at = (deps.now?.() ?? new Date()).toISOString();
  return commitChange(deps.store, integration.id, async (tx) => {
    const { secret } = options;
    const issued = await storeKey(tx, {
      integrationId: integration.id,
      kind: 'v1',
      createdBy: who.actor,
      at,
      ...(secret === undefined ? {} : { secret }),
    });
    await options.within?.(tx, issued);
    const current = await tx.states.get(integration.id);
    const links = await linkLegacyLeads(tx, integration, at);
    const state = await move(tx, integration, 'v1_key_issued', current === 'legacy' ? 'migrating' : null, who, at, {
      key_id: issued.key.id,
      prefix: issued.key.prefix,
      linked_leads: links.linked,
      unlinked_leads: links.unlinkedTotal,
    });
    await writeEvent(
      tx,
      'integration.key_issued',
      integration.workspace.id,
      {
        ...aboutIntegration(integration),
        actor: who.actor,
        state,
      },
      at,
    );
    return { ...issued, state, links };
  });
}

/**
 * A v1 test key: its calls run the whole v1 path and keep nothing (docs/api.md, "Test mode"). Issued
 * as many times as asked, like the v1 key, in any state; it moves no state and links nothing.
 */
export async function issueTestKey(
  deps: MigrationDeps,
  integration: Integration,
  who: Actor,
  within?: WithIssued,
): Promise<IssuedKey & { state: MigrationState }> {
  const at = (deps.now?.() ?? new Date()).toISOString();
  return commitChange(deps.store, integration.id, async (tx) => {
    const issued = await storeKey(tx, { integrationId: integration.id, kind: 'test', createdBy: who.actor, at });
    await within?.(tx, issued);
    const state = await move(tx, integration, 'test_key_issued', null, who, at, {
      key_id: issued.key.id,
      prefix: issued.key.prefix,
    });
    return { ...issued, state };
  });
}

/** The owner's "renew key": every current key stops at once (test keys too), one new v1 key is issued. */
export async function renewKeys(
  deps: MigrationDeps,
  integration: Integration,
  who: Actor,
  within?: WithIssued,
): Promise<IssuedKey & { revoked: number; state: MigrationState }> {
  const at = (deps.now?.() ?? new Date()).toISOString();
  return commitChange(deps.store, integration.id, async (tx) => {
    const revoked = await tx.keys.revokeAll(integration.id, at);
    const issued = await storeKey(tx, { integrationId: integration.id, kind: 'v1', createdBy: who.actor, at });
    await within?.(tx, { ...issued, revoked });
    const current = await tx.states.get(integration.id);
    const state = await move(tx, integration, 'keys_renewed', current === 'legacy' ? 'migrating' : null, who, at, {
      revoked,
      key_id: issued.key.id,
      prefix: issued.key.prefix,
    });
    await writeEvent(
      tx,
      'integration.renewed',
      integration.workspace.id,
      {
        ...aboutIntegration(integration),
        actor: who.actor,
        revoked_keys: revoked,
      },
      at,
    );
    return { ...issued, revoked, state };
  });
}

/**
 * Revokes the keys the console issued whose session ended before a page showed them (retention runs
 * it), each audited as never shown; in the caller's unit. Returns how many were live.
 */
export async function revokeNeverShown(
  tx: Repos,
  keys: readonly { keyId: string; integrationId: string; prefix: string }[],
  at: string,
): Promise<number> {
  let revoked = 0;
  for (const key of keys) {
    if (!(await tx.keys.revoke(key.keyId, at))) continue;
    revoked++;
    await move(
      tx,
      { id: key.integrationId },
      'key_revoked',
      null,
      { actor: 'console', reason: 'never shown: the console session that issued it ended before a page showed it' },
      at,
      {
        key_id: key.keyId,
        prefix: key.prefix,
        never_shown: true,
      },
    );
  }
  return revoked;
}

/** Revokes one key of the integration, audited; the other keys go on working. */
export async function revokeKey(
  deps: MigrationDeps,
  integration: Pick<Integration, 'id'>,
  keyId: string,
  who: Actor,
): Promise<ApiKey> {
  const at = (deps.now?.() ?? new Date()).toISOString();
  return commitChange(deps.store, integration.id, async (tx) => {
    const key = (await tx.keys.listForIntegration(integration.id)).find((k) => k.id === keyId);
    if (!key) throw new AppError('not-found', `No key ${keyId} belongs to this integration.`);
    if (!(await tx.keys.revoke(key.id, at)))
      throw new AppError('conflict', `Key ${keyId} was revoked at ${key.revokedAt}.`, { revoked_at: key.revokedAt });
    await move(tx, integration, 'key_revoked', null, who, at, { key_id: key.id, kind: key.kind, prefix: key.prefix });
    return { ...key, revokedAt: at };
  });
}

/**
 * Links the legacy-created leads not linked yet, as issuing the v1 key does, without issuing one:
 * after a fix to the legacy rule or to the data.
 */
export async function relinkLegacyLeads(
  deps: MigrationDeps,
  integration: Integration,
  who: Actor,
): Promise<LinkReport> {
  const at = (deps.now?.() ?? new Date()).toISOString();
  return commitChange(deps.store, integration.id, async (tx) => {
    const links = await linkLegacyLeads(tx, integration, at);
    await move(tx, integration, 'legacy_leads_linked', null, who, at, {
      linked_leads: links.linked,
      unlinked_leads: links.unlinkedTotal,
    });
    return links;
  });
}

/** Step 3 of docs/runbook.md: the old interface is switched off; refused while legacy calls are recent, unless forced. */
export async function switchOff(
  deps: MigrationDeps,
  integration: Integration,
  input: Actor & { force: boolean; quietPeriodHours?: number | undefined },
): Promise<MigrationState> {
  await deps.usage.flush();
  const now = deps.now?.() ?? new Date();
  const quietHours = input.quietPeriodHours ?? DEFAULT_QUIET_PERIOD_HOURS;
  return commitChange(deps.store, integration.id, async (tx) => {
    const current = await tx.states.get(integration.id);
    if (current !== 'migrating') {
      throw new AppError(
        'conflict',
        current === 'legacy'
          ? `${integration.handle} has no v1 key yet: issue the additional key first (legacy -> migrating).`
          : `${integration.handle} is already switched off.`,
        { state: current },
      );
    }
    const lastLegacy = await tx.states.lastSeen(integration.id, 'legacy');
    const quietSince = new Date(now.getTime() - quietHours * 3_600_000).toISOString();
    if (lastLegacy !== null && lastLegacy > quietSince && !input.force) {
      throw new AppError(
        'conflict',
        `${integration.handle} called the deprecated interface at ${lastLegacy}, within the ${quietHours} h quiet period. ` +
          'Wait until the bot has moved, or switch off with force.',
        { state: current, last_legacy_call: lastLegacy },
      );
    }
    const state = await move(
      tx,
      integration,
      input.force ? 'switched_off_forced' : 'switched_off',
      'switched_off',
      input,
      now.toISOString(),
      {
        last_legacy_call: lastLegacy,
        quiet_period_hours: quietHours,
      },
    );
    await writeEvent(
      tx,
      'integration.switched_off',
      integration.workspace.id,
      {
        ...aboutIntegration(integration),
        actor: input.actor,
        forced: input.force,
      },
      now.toISOString(),
    );
    await cancelStoredBrownouts(tx, integration, 'switched off', now.toISOString(), input);
    return state;
  });
}

/** switched_off -> migrating: the old key works again. A reason is required. */
export async function rollback(
  deps: MigrationDeps,
  integration: Integration,
  who: Actor & { reason: string },
): Promise<MigrationState> {
  const at = (deps.now?.() ?? new Date()).toISOString();
  return commitChange(deps.store, integration.id, async (tx) => {
    const current = await tx.states.get(integration.id);
    if (current !== 'switched_off') {
      throw new AppError(
        'conflict',
        `${integration.handle} is ${current}; only a switched-off integration can be rolled back.`,
        { state: current },
      );
    }
    // A schedule pending still (the integration was switched off by hand) would switch it off again.
    const schedule = await tx.schedules.get(integration.id);
    if (schedule?.status === 'pending')
      await endSchedule(tx, integration, schedule, `cancelled by the rollback of ${who.actor}`, at, who);
    // Any stored window left goes too: the service team sets new ones for the next attempt.
    await cancelStoredBrownouts(tx, integration, `cancelled by the rollback of ${who.actor}`, at, who);
    const state = await move(tx, integration, 'rolled_back', 'migrating', who, at);
    await writeEvent(
      tx,
      'integration.rolled_back',
      integration.workspace.id,
      {
        ...aboutIntegration(integration),
        actor: who.actor,
        reason: who.reason,
      },
      at,
    );
    return state;
  });
}
