// The owner's "ported" flag beside the migration state, and the answers 404s the gateway counts for the
// service team (docs/runbook.md, "Marking an integration ported" and "The answers 404 list").
import { z } from 'zod';
import { AppError } from '../errors.js';
import { decodeCursor, encodeCursor } from '../http/cursor.js';
import type { Integration } from '../rules/catalog.js';
import type { Repos } from '../store/store.js';
import type { NotFoundCursor, PortedFlag } from '../store/repos/states.js';
import type { Lead } from '../store/repos/leads.js';
import { personIdTemplate, renderExternalId } from '../lead/external-id.js';
import { recordAction, type Actor, type MigrationDeps } from './service.js';

export const PortedFlagSchema = z
  .object({
    ported_at: z.iso.datetime(),
    ported_by: z.string().meta({ description: 'The operator or console user who marked it' }),
    note: z.string().nullable(),
  })
  .meta({
    id: 'PortedFlag',
    description: 'The integration was marked "ported" (a flag beside the state, not a state). Null: not marked',
  });
export type PortedFlagView = z.infer<typeof PortedFlagSchema>;

export const portedView = (flag: PortedFlag | null): PortedFlagView | null =>
  flag === null ? null : { ported_at: flag.at, ported_by: flag.by, note: flag.note };

/** Who marks: the service team (admin API, CLI, console) or the workspace's owner (console). */
export type PortingRole = 'service_team' | 'owner';

/** Marks the integration ported, audited under its lock. Marked already: 409, nothing changes. */
export async function markPorted(
  deps: MigrationDeps,
  integration: Pick<Integration, 'id' | 'handle'>,
  who: Actor & { note: string | null; role: PortingRole },
): Promise<PortedFlag> {
  const flag: PortedFlag = {
    integrationId: integration.id,
    at: (deps.now?.() ?? new Date()).toISOString(),
    by: who.actor,
    note: who.note,
  };
  return deps.store.transact(async (tx) => {
    await tx.locks.integration(integration.id);
    if (!(await tx.states.setPorted(flag))) {
      const found = (await tx.states.ported(integration.id))!;
      throw new AppError(
        'conflict',
        `${integration.handle} was marked ported by ${found.by} at ${found.at}: clear the flag first to mark it again.`,
        {
          ported: portedView(found),
        },
      );
    }
    await recordAction(tx, integration, 'marked_ported', { actor: who.actor, reason: who.note }, flag.at, {
      role: who.role,
    });
    return flag;
  });
}

/** Clears the flag, audited under the integration's lock: the service team's alone. Not marked: 409. */
export async function clearPorted(
  deps: MigrationDeps,
  integration: Pick<Integration, 'id' | 'handle'>,
  who: Actor & { role: PortingRole },
): Promise<void> {
  if (who.role !== 'service_team') throw new AppError('forbidden', 'Only the service team may clear the ported flag.');
  const at = (deps.now?.() ?? new Date()).toISOString();
  await deps.store.transact(async (tx) => {
    await tx.locks.integration(integration.id);
    const found = await tx.states.ported(integration.id);
    if (found === null || !(await tx.states.clearPorted(integration.id)))
      throw new AppError('conflict', `${integration.handle} is not marked ported.`, { ported: null });
    await recordAction(tx, integration, 'ported_cleared', who, at, {
      ported_at: found.at,
      ported_by: found.by,
      note: found.note,
    });
  });
}

export const LegacyCandidateSchema = z
  .object({
    lead_id: z.uuid(),
    code: z.enum(['not_linked', 'bound_to_another_person']),
    reason: z.string(),
  })
  .meta({
    id: 'LegacyCandidate',
    description:
      'A legacy-created lead whose legacy rule gives this external_contact_id, not linked to the integration',
  });

export const NotFoundEntrySchema = z
  .object({
    external_contact_id: z.string(),
    calls: z.number().int(),
    first_at: z.iso.datetime(),
    last_at: z.iso.datetime(),
    legacy_leads: z
      .array(LegacyCandidateSchema)
      .meta({ description: 'Unlinked legacy leads of this person (empty: none found)' }),
  })
  .meta({ id: 'AnswersNotFound' });

export const NotFoundPageSchema = z
  .object({
    items: z.array(NotFoundEntrySchema),
    next: z.string().nullable().meta({ description: 'Give as `after` for the next page; null: the last page' }),
    ids: z.number().int().meta({ description: 'external_contact_ids listed in all' }),
    calls: z.number().int().meta({ description: 'Their 404s counted in all' }),
    ids_max: z
      .number()
      .int()
      .meta({ description: 'At most this many ids are listed per integration; a further id is not counted' }),
  })
  .meta({ id: 'AnswersNotFoundPage' });
export type NotFoundPage = z.infer<typeof NotFoundPageSchema>;

export const NOT_FOUND_PAGE_DEFAULT = 50;
export const NOT_FOUND_PAGE_MAX = 500;

export const NotFoundQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(NOT_FOUND_PAGE_MAX).default(NOT_FOUND_PAGE_DEFAULT),
  after: z.string().max(2000).optional().meta({ description: 'The `next` of the page before' }),
});

/** The sort key of the 404 list's cursor (src/http/cursor.ts). */
const CURSOR = ['lastAt', 'externalContactId'] as const;

/**
 * One page of the answers 404s, the latest first, each with the unlinked legacy leads of that person:
 * the linking's own rule (legacy.external_contact_id) applied read only. Written with the usage counts,
 * so flushed first. Read with `snapshot`: one snapshot, and on SQLite the reader connection, so that a page
 * never waits for the one writer nor holds it (`readOne` would run on the writer; `readCommitted` is `snapshot` there).
 */
export async function notFoundAnswers(
  deps: MigrationDeps,
  integration: Integration,
  page: { limit: number; after?: string | undefined },
): Promise<NotFoundPage> {
  const after = page.after === undefined ? null : decodeCursor(CURSOR, page.after);
  await deps.usage.flush();
  return deps.store.snapshot((r) =>
    notFoundPage(r, integration, page.limit, after, deps.usage.caps.notFoundIdsPerIntegration),
  );
}

/**
 * How many unlinked legacy leads a report counts and a 404 page looks through, the oldest first: what
 * either costs stays bounded however many there are. Past it the report says "more than" and a 404 page
 * may miss a later lead; linking (which binds them all) brings the number down.
 */
export const UNLINKED_LEGACY_EXAMINED = 10_000;

/**
 * The unlinked legacy leads whose person id is one of `ids`, per id: only those leads are read (the
 * store makes each lead's id in its statement, over the oldest UNLINKED_LEGACY_EXAMINED), and each is
 * checked against the id made here.
 */
async function unlinkedLegacyLeadsOf(r: Repos, integration: Integration, ids: string[]): Promise<Map<string, Lead[]>> {
  const byId = new Map<string, Lead[]>();
  const rule = integration.legacy.externalContactId;
  const template = rule === null ? null : personIdTemplate(rule);
  if (rule === null || template === null || ids.length === 0) return byId;
  for (const lead of await r.leads.unlinkedLegacyOf(integration.id, template, ids, UNLINKED_LEGACY_EXAMINED)) {
    const id = renderExternalId(rule, lead);
    if (id === null) continue;
    const leads = byId.get(id);
    if (leads) leads.push(lead);
    else byId.set(id, [lead]);
  }
  return byId;
}

/** The page, in the caller's read (the migration report's first page, or a page of its own): what it reads is bounded by `limit`. */
export async function notFoundPage(
  r: Repos,
  integration: Integration,
  limit: number,
  after: NotFoundCursor | null,
  idsMax: number,
): Promise<NotFoundPage> {
  // One more than the page: whether there is a next one.
  const rows = await r.states.notFound(integration.id, limit + 1, after);
  const entries = rows.slice(0, limit);
  const totals = await r.states.notFoundTotals(integration.id);
  const leadsOf = await unlinkedLegacyLeadsOf(
    r,
    integration,
    entries.map((e) => e.externalContactId),
  );
  const items = [];
  for (const e of entries) {
    const leads = leadsOf.get(e.externalContactId) ?? [];
    const bound = leads.length === 0 ? null : await r.contacts.findByBinding(integration.id, e.externalContactId);
    const legacy = leads.map((lead) =>
      bound !== null && bound.id !== lead.contactId
        ? {
            lead_id: lead.id,
            code: 'bound_to_another_person' as const,
            reason: `${e.externalContactId} is already bound to another person`,
          }
        : {
            lead_id: lead.id,
            code: 'not_linked' as const,
            reason:
              'not linked yet: linking (lead-gateway link, POST /admin/v1/integrations/{integration}/link) binds it',
          },
    );
    items.push({
      external_contact_id: e.externalContactId,
      calls: e.calls,
      first_at: e.firstAt,
      last_at: e.lastAt,
      legacy_leads: legacy,
    });
  }
  const last = entries.at(-1);
  return {
    items,
    next: rows.length > limit && last ? encodeCursor(CURSOR, last) : null,
    ids: totals.ids,
    calls: totals.calls,
    ids_max: idsMax,
  };
}
