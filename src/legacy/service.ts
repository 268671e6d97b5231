// The deprecated interface's writes, translated onto the v1 services (docs/legacy-api.md, "Translated writes").
import { createHash, hash } from 'node:crypto';
import type { Repos, Store } from '../store/store.js';
import { AppError, detailOf, pointerOf } from '../errors.js';
import type { Integration } from '../rules/catalog.js';
import { stableId } from '../rules/ids.js';
import { canonicalJson } from '../canonical-json.js';
import { submitLead } from '../intake/service.js';
import { LeadSubmissionSchema } from '../intake/schemas.js';
import type { LeadObject } from '../lead/schemas.js';
import type { UsageRecorder } from '../migration/usage.js';
import type { LegacyLeadCreate, LegacyLeadUpdate } from './schemas.js';
import type { Lead } from '../store/repos/leads.js';
import { renderLead } from '../lead/view.js';
import { runOnce } from '../idempotency/replay.js';
import { applyAnswers } from '../answers/engine.js';
import type { LegacyTag } from '../store/repos/legacy-tags.js';
import { answersFromLegacy, translateLegacyLead } from '../porting/translate.js';
import { newId } from '../store/ids.js';

export interface LegacyDeps {
  store: Store;
  usage: UsageRecorder;
  now?: () => Date;
}

const DAY_MS = 86_400_000;

/** A legacy write's event: its own id, and the event of the day before it resends while that one holds. */
export interface LegacyEvent {
  eventId: string;
  earlier?: { eventId: string; holds: (createdAt: string) => boolean };
}

/**
 * The event_id of a legacy POST. With an Idempotency-Key header it is derived from that key. Without,
 * from a hash of the integration and the canonical body, in one-day buckets: a retry finds the event of
 * its own bucket or, within 24 h of it, of the previous one, so an identical POST retried within 24 h
 * creates nothing new, while the same body a day later is a new inquiry. The previous bucket's event is
 * looked for with the request's own, in the same round trip (`runOnce`, `earlier`).
 */
export function legacyEvent(
  deps: LegacyDeps,
  integration: Integration,
  scope: string,
  body: unknown,
  idempotencyKey: string | undefined,
): LegacyEvent {
  if (idempotencyKey !== undefined) {
    const key =
      idempotencyKey.length <= 200 ? idempotencyKey : createHash('sha256').update(idempotencyKey).digest('hex');
    return { eventId: `legacy:${scope}:key:${key}` };
  }
  const now = (deps.now?.() ?? new Date()).getTime();
  const digest = hash('sha256', `${integration.id}\n${canonicalJson(body)}`, 'hex');
  const bucket = Math.floor(now / DAY_MS);
  return {
    eventId: `legacy:${scope}:${digest}:${bucket}`,
    earlier: {
      eventId: `legacy:${scope}:${digest}:${bucket - 1}`,
      holds: (createdAt) => now - Date.parse(createdAt) < DAY_MS,
    },
  };
}

/** Names of the tags a legacy bot refers to by id: catalog tags, or tags it created with tags/create/. */
async function tagNames(store: Store, integration: Integration, ids: readonly string[]): Promise<string[]> {
  const ws = integration.workspace;
  // Most bots send no tag_ids, or only catalog tags: no read (a read transaction is two statements more).
  if (ids.every((id) => ws.tags.has(id))) return ids.map((id) => ws.tags.get(id)!.name);
  return store.snapshot(async (r) => {
    const names: string[] = [];
    for (const id of ids) {
      const name = ws.tags.get(id)?.name ?? (await r.legacyTags.get(ws.id, id))?.name;
      if (name !== undefined) names.push(name);
    }
    return names;
  });
}

/** POST leads/: a v1 submission made from the legacy body. Answers with the lead object; `replayed`: a retry of a recorded POST. */
export async function createLegacyLead(
  deps: LegacyDeps,
  integration: Integration,
  body: LegacyLeadCreate,
  idempotencyKey: string | undefined,
  inexactData?: ReadonlySet<string>,
): Promise<{ lead: LeadObject | null; replayed: boolean }> {
  const translation = translateLegacyLead(
    integration,
    body,
    await tagNames(deps.store, integration, body.tag_ids ?? []),
    inexactData,
  );
  const event = legacyEvent(deps, integration, 'lead', body, idempotencyKey);
  const submission = LeadSubmissionSchema.safeParse({
    event_id: event.eventId,
    external_contact_id: translation.externalContactId,
    first_name: body.first_name,
    last_name: body.last_name,
    phone: body.phone,
    email: body.email,
    notes: body.notes,
    metadata: translation.metadata,
    answers: translation.answers,
  });
  if (!submission.success) {
    const errors = submission.error.issues.map((i) => ({ path: pointerOf(i.path), message: i.message }));
    throw new AppError('validation-failed', detailOf(errors), { errors });
  }
  // The record's time from the clock of the buckets: a retry compares the two (only tests set `now`).
  const clock = deps.now;
  const intake = { store: deps.store, ...(clock ? { now: () => clock().toISOString() } : {}) };
  const reply = await submitLead(intake, integration, submission.data, {
    origin: 'legacy',
    inexactAnswers: translation.inexactAnswers,
    ...(event.earlier ? { earlier: event.earlier } : {}),
  });
  // Counted only now: a refused request (422, 409) leaves the migration report as it was.
  deps.usage.recordIgnored(integration.id, translation.ignored);
  return { lead: reply.body.lead, replayed: reply.body.replayed };
}

/**
 * Tags the bots of one workspace may create with tags/create/ (catalog tags not counted). A bot creates
 * the handful of labels it sorts leads by; 500 is far past that, and bounds `GET tags/` (3,000 created
 * tags made an answer that only grew).
 */
export const LEGACY_TAGS_PER_WORKSPACE_MAX = 500;

/**
 * tags/create/: a tag with a stable id per name, remembered so later tag_ids naming it translate. A
 * name created before answers its tag at any count; a new one past LEGACY_TAGS_PER_WORKSPACE_MAX is
 * a 409 naming the cap, nothing stored. The workspace's tags lock (an advisory lock on PostgreSQL) makes
 * the count and the insert of two replicas' units one after the other, so the cap holds exactly.
 */
export async function createLegacyTag(
  deps: LegacyDeps,
  integration: Integration,
  name: string,
  color: string | null,
): Promise<LegacyTag> {
  const ws = integration.workspace;
  const id = stableId(ws.slug, 'tag', name);
  const catalog = ws.tags.get(id);
  if (catalog)
    return { workspaceId: ws.id, id, name: catalog.name, color: catalog.color, createdAt: new Date(0).toISOString() };
  const at = (deps.now?.() ?? new Date()).toISOString();
  return deps.store.transact(async (tx) => {
    await tx.locks.legacyTags(ws.id);
    const known = await tx.legacyTags.get(ws.id, id);
    if (known) return known;
    if ((await tx.legacyTags.count(ws.id)) >= LEGACY_TAGS_PER_WORKSPACE_MAX) {
      throw new AppError(
        'limit-reached',
        `This workspace's bots have created ${LEGACY_TAGS_PER_WORKSPACE_MAX} tags, the most it may hold; reuse one of them (GET tags/).`,
        {
          limit: 'tags_per_workspace',
          max: LEGACY_TAGS_PER_WORKSPACE_MAX,
        },
      );
    }
    return tx.legacyTags.ensure({ workspaceId: ws.id, id, name, color, createdAt: at });
  });
}

/**
 * What a bot may do with a lead: `view` (read it and its comments, comment, add tags or data) reaches
 * the leads its integration created and those one of its submissions joined (the bot was given that
 * lead's id when its person was already known); `manage` (move, delete, record a payment) reaches only
 * the leads its integration created, since a joined lead belongs to another integration's intake.
 */
export type LeadReach = 'view' | 'manage';

/** The lead if it is within the bot's reach and not deleted; another workspace's lead is never reached. */
async function reachable(
  r: Repos,
  integration: Integration,
  found: Lead | null,
  reach: LeadReach,
): Promise<Lead | null> {
  if (!found || found.deletedAt !== null || found.workspaceId !== integration.workspace.id) return null;
  if (found.integrationId === integration.id) return found;
  return reach === 'view' && (await r.submissions.submittedTo(integration.id, found.id)) ? found : null;
}

const notOwn = (leadId: string) => new AppError('not-found', `No lead ${leadId} of this bot.`);

/** A lead within the bot's reach, read in `r`'s snapshot, or a 404. */
export async function ownLead(
  r: Repos,
  integration: Integration,
  leadId: string,
  reach: LeadReach = 'view',
): Promise<Lead> {
  const lead = await reachable(r, integration, await r.leads.get(leadId), reach);
  if (!lead) throw notOwn(leadId);
  return lead;
}

/**
 * A lead within the bot's reach, locked for the unit of work that writes it (`leads.lock`), or a 404.
 * The check and the write it guards are one unit: a lead deleted or moved out of reach meanwhile is
 * refused, never written.
 */
export async function lockOwnLead(
  tx: Repos,
  integration: Integration,
  leadId: string,
  reach: LeadReach = 'view',
): Promise<Lead> {
  return assertOwn(tx, integration, leadId, await tx.leads.lock(leadId), reach);
}

/** `lead` (as the unit read it) if it is within the bot's reach, else a 404. */
export async function assertOwn(
  tx: Repos,
  integration: Integration,
  leadId: string,
  lead: Lead | null,
  reach: LeadReach,
): Promise<Lead> {
  const own = await reachable(tx, integration, lead, reach);
  if (!own) throw notOwn(leadId);
  return own;
}

/**
 * PATCH/PUT leads/{id}/: tags added to the lead and data keys become answers for that lead, through
 * the tag and data rules, recorded once per event like any answers submission. Stage and tags stay.
 */
export async function updateLegacyLead(
  deps: LegacyDeps,
  integration: Integration,
  leadId: string,
  body: LegacyLeadUpdate,
  idempotencyKey: string | undefined,
  inexactData?: ReadonlySet<string>,
): Promise<{ lead: LeadObject; replayed: boolean }> {
  const lead = await deps.store.snapshot((r) => ownLead(r, integration, leadId));
  const current = new Set(await deps.store.snapshot((r) => r.leads.tagIds(lead.id)));
  const added = (body.tag_ids ?? []).filter((id) => !current.has(id));
  const { answers, inexactAnswers, ignored } = answersFromLegacy(
    integration,
    await tagNames(deps.store, integration, added),
    body.extra_data ?? {},
    inexactData,
  );
  let replayed = false;
  if (Object.keys(answers).length > 0) {
    const { eventId, earlier } = legacyEvent(deps, integration, `patch:${lead.id}`, body, idempotencyKey);
    const recorded = { lead_id: lead.id, answers };
    replayed = await runOnce(
      deps.store,
      {
        integrationId: integration.id,
        endpoint: 'answers',
        eventId,
        body: recorded,
        ...(earlier ? { earlier: { ...earlier, body: recorded } } : {}),
      },
      {
        replay: async () => true,
        fresh: async (tx) => {
          // Checked again in the unit that writes, on the lead locked: it may have been deleted since.
          await lockOwnLead(tx, integration, lead.id);
          const at = (deps.now?.() ?? new Date()).toISOString();
          const id = newId();
          const result = await applyAnswers(
            tx,
            integration,
            { leadId: lead.id, submissionId: id, at },
            answers,
            inexactAnswers,
          );
          return {
            reply: async () => false,
            record: {
              id,
              contactId: lead.contactId,
              leadId: lead.id,
              outcome: { lead_id: lead.id, contact_id: lead.contactId, submission_id: id, answers: result },
              createdAt: at,
            },
          };
        },
      },
    );
  }
  // Counted only now: a refused request (409) leaves the migration report as it was.
  deps.usage.recordIgnored(integration.id, [
    ...Object.keys(body).filter((k) => k !== 'tag_ids' && k !== 'extra_data'),
    ...ignored,
  ]);
  return {
    lead: await deps.store.snapshot(async (r) => renderLead(r, integration.workspace, (await r.leads.get(lead.id))!)),
    replayed,
  };
}
