// Legacy reads and actions with no v1 translation, served from the gateway's own store (docs/legacy-api.md, "Reads and actions").
import { AppError } from '../errors.js';
import type { Integration, Workspace } from '../rules/catalog.js';
import { actOnLead } from '../lead/operator.js';
import { formatMinor, renderLead } from '../lead/view.js';
import type { LeadObject } from '../lead/schemas.js';
import type { Rules } from '../rules/catalog.js';
import { assertOwn, lockOwnLead, ownLead, type LegacyDeps } from './service.js';
import { newId } from '../store/ids.js';
import type { PagePosition } from '../store/repos/lead-pages.js';
import {
  encodeCursor,
  LEGACY_LIST_PAGE_SIZE,
  LEGACY_PAGE_DEPTH_MAX,
  type LegacyListPageQuery,
  type LegacyPageQuery,
} from './schemas.js';
import { commentLimitPassed, COMMENTS_PER_LEAD_MAX } from '../lead/comments.js';

type Deps = LegacyDeps & { rules: () => Rules };

export function listBoards(ws: Workspace) {
  const boards = new Map<string, { id: string; name: string; stages: { id: string; name: string; order: number }[] }>();
  for (const stage of ws.stages.values()) {
    const board = boards.get(stage.boardId) ?? { id: stage.boardId, name: stage.boardName, stages: [] };
    board.stages.push({ id: stage.id, name: stage.name, order: stage.order });
    boards.set(stage.boardId, board);
  }
  return [...boards.values()];
}

export async function listStatuses(deps: Deps, ws: Workspace) {
  return deps.store.snapshot((r) =>
    Promise.all(
      [...ws.statuses.values()].map(async (s) => ({
        id: s.id,
        name: s.name,
        color: s.color,
        is_default: s.isDefault,
        leads_count: await r.leads.countByStatus(s.id),
        order: s.order,
        created_at: null,
      })),
    ),
  );
}

export async function listGroups(deps: Deps, ws: Workspace) {
  return deps.store.snapshot((r) =>
    Promise.all(
      [...ws.groups.values()].map(async (g) => ({
        id: g.id,
        name: g.name,
        color: g.color,
        leads_count: await r.leads.countByGroup(g.id),
        order: g.order,
        created_at: null,
      })),
    ),
  );
}

/** A page of a list when the bot asks for one (`page=` or `page_size=`), DRF's page-number shape; else null. */
function pageAsked(query: LegacyListPageQuery): { page: number; size: number; offset: number } | null {
  if (query.page === undefined && query.page_size === undefined) return null;
  const page = query.page ?? 1;
  const size = query.page_size ?? LEGACY_LIST_PAGE_SIZE;
  return { page, size, offset: (page - 1) * size };
}

/**
 * The page's links, relative as those of `GET leads/`. A page past the end is empty (as `GET leads/`
 * answers it), its previous link the last page that has items.
 */
function pageOf<T>(path: string, asked: { page: number; size: number; offset: number }, count: number, results: T[]) {
  const link = (p: number) => `${path}?page=${p}&page_size=${asked.size}`;
  const last = Math.max(1, Math.ceil(count / asked.size));
  return {
    count,
    next: asked.offset + asked.size < count ? link(asked.page + 1) : null,
    previous: asked.page > 1 ? link(Math.min(asked.page - 1, last)) : null,
    results,
  };
}

/**
 * Catalog tags, then the tags the workspace's bots created (at most LEGACY_TAGS_PER_WORKSPACE_MAX):
 * the whole plain array, or one page of it when the bot asks.
 */
export async function listTags(
  deps: Deps,
  ws: Workspace,
  query: LegacyListPageQuery = {},
  path = '/api/bots/api/tags/',
) {
  const created = await deps.store.snapshot((r) => r.legacyTags.list(ws.id));
  const all = [
    ...[...ws.tags.values()].map((t) => ({ id: t.id, name: t.name, color: t.color })),
    ...created.filter((t) => !ws.tags.has(t.id)),
  ].map((t) => ({
    id: t.id,
    name: t.name,
    color: t.color,
    is_active: true,
    archived_at: null,
  }));
  const asked = pageAsked(query);
  return asked ? pageOf(path, asked, all.length, all.slice(asked.offset, asked.offset + asked.size)) : all;
}

/**
 * DRF-style page of this bot's own leads, newest first. Every page reads only its own leads (plus one,
 * to know whether a next page exists): `page=` alone is an offset bounded by LEGACY_PAGE_DEPTH_MAX and
 * stepped over in the index; the next and previous links carry a cursor, served from the index at any
 * depth (and a lead created meanwhile no longer shifts the pages of a bot that follows them).
 */
export async function listOwnLeads(deps: Deps, integration: Integration, query: LegacyPageQuery, path: string) {
  const ws = integration.workspace;
  const { page, page_size: size } = query;
  const position: PagePosition = query.after
    ? { after: query.after }
    : query.before
      ? { before: query.before }
      : { offset: (page - 1) * size };
  return deps.store.snapshot(async (r) => {
    const count = await r.leadPages.countOfIntegration(integration.id);
    const rows = await r.leadPages.pageOfIntegration(integration.id, position, size + 1);
    // One row past the page says whether there is more in the direction read.
    const more = rows.length > size;
    const leads = 'before' in position ? rows.slice(more ? 1 : 0) : rows.slice(0, size);
    const link = (p: number, cursor?: string) => `${path}?page=${p}&page_size=${size}${cursor ?? ''}`;
    const first = leads[0];
    const last = leads.at(-1);
    const hasNext = 'before' in position || more;
    const hasPrevious = 'before' in position ? more : page > 1;
    return {
      count,
      next: hasNext && last ? link(page + 1, `&after=${encodeCursor(last)}`) : null,
      previous: !hasPrevious
        ? null
        : first
          ? link(Math.max(page - 1, 1), `&before=${encodeCursor(first)}`)
          : (page - 1) * size <= LEGACY_PAGE_DEPTH_MAX
            ? link(page - 1)
            : null,
      results: await Promise.all(leads.map((lead) => renderLead(r, ws, lead))),
    };
  });
}

export async function getOwnLead(deps: Deps, integration: Integration, leadId: string): Promise<LeadObject> {
  return deps.store.snapshot(async (r) => renderLead(r, integration.workspace, await ownLead(r, integration, leadId)));
}

// The bot's writes check its reach in the unit that writes, on the lead locked (legacy/service.ts).
export async function moveOwnLead(
  deps: Deps,
  integration: Integration,
  leadId: string,
  stageId: string,
): Promise<LeadObject> {
  return (await actOnLead(deps, leadId, { kind: 'move', stageId }, (tx, lead) =>
    assertOwn(tx, integration, leadId, lead, 'manage'),
  ))!;
}

export async function deleteOwnLead(deps: Deps, integration: Integration, leadId: string): Promise<void> {
  await actOnLead(deps, leadId, { kind: 'delete' }, (tx, lead) => assertOwn(tx, integration, leadId, lead, 'manage'));
}

/** A comment, within the lead's caps (lead/comments.ts); past one, a 409 naming it and nothing stored. */
export async function addComment(deps: Deps, integration: Integration, leadId: string, text: string) {
  const createdAt = new Date().toISOString();
  const comment = await deps.store.transact(async (tx) => {
    const lead = await lockOwnLead(tx, integration, leadId);
    const passed = await commentLimitPassed(tx, lead.id, text);
    if (passed) throw new AppError('limit-reached', passed.detail, { limit: passed.limit, max: passed.max });
    const c = {
      id: newId(),
      leadId: lead.id,
      body: text,
      authorKind: 'integration' as const,
      authorRef: integration.id,
      createdAt,
    };
    await tx.leads.addComment(c);
    return c;
  });
  return { id: comment.id, lead: comment.leadId, text: comment.body, created_at: comment.createdAt };
}

/** The lead's comments, oldest first (at most COMMENTS_PER_LEAD_MAX): the plain array, or a page when the bot asks. */
export async function listComments(
  deps: Deps,
  integration: Integration,
  leadId: string,
  query: LegacyListPageQuery = {},
) {
  const asked = pageAsked(query);
  const shape = (c: { id: string; leadId: string; body: string; createdAt: string }) => ({
    id: c.id,
    lead: c.leadId,
    text: c.body,
    created_at: c.createdAt,
  });
  return deps.store.snapshot(async (r) => {
    const lead = await ownLead(r, integration, leadId);
    // A lead that held more before the caps existed answers its oldest COMMENTS_PER_LEAD_MAX here; page= reaches the rest.
    if (!asked) return (await r.leads.listComments(lead.id, { offset: 0, limit: COMMENTS_PER_LEAD_MAX })).map(shape);
    const count = await r.leads.commentsCount(lead.id);
    // Past the end there is nothing to read (and an offset of any size never reaches the engine).
    const rows =
      asked.offset < count ? await r.leads.listComments(lead.id, { offset: asked.offset, limit: asked.size }) : [];
    return pageOf(`/api/bots/api/leads/${lead.id}/comments/`, asked, count, rows.map(shape));
  });
}

/** A payment's amount: at most this many digits before the decimal point, and at most two after. */
export const PAYMENT_INTEGER_DIGITS_MAX = 15;
const AMOUNT = new RegExp(`^(\\d{1,${PAYMENT_INTEGER_DIGITS_MAX}})(?:\\.(\\d{1,2}))?$`);

/**
 * Amounts are decimal strings or numbers with at most two decimals, kept as exact hundredths. A JSON
 * number the request text holds more precisely than a JavaScript number (`inexact`, from the JSON
 * parser) is refused rather than rounded.
 */
export function toMinor(amount: string | number, inexact = false): bigint {
  const text = typeof amount === 'number' ? String(amount) : amount.trim();
  const m = AMOUNT.exec(text);
  if (inexact || !m) {
    const message = inexact
      ? 'cannot be carried exactly as a JSON number; send it as a string, e.g. "250000.50"'
      : `must be a positive amount with at most ${PAYMENT_INTEGER_DIGITS_MAX} digits before the decimal point and two after`;
    throw new AppError('validation-failed', `amount ${message}, e.g. 250000 or 99.50`, {
      errors: [{ path: '/amount', message }],
    });
  }
  return BigInt(m[1]!) * 100n + BigInt((m[2] ?? '').padEnd(2, '0'));
}

export async function addPayment(
  deps: Deps,
  integration: Integration,
  leadId: string,
  amount: string | number,
  note: string | null,
  inexact = false,
) {
  const amountMinor = toMinor(amount, inexact);
  const createdAt = new Date().toISOString();
  const payment = await deps.store.transact(async (tx) => {
    const lead = await lockOwnLead(tx, integration, leadId, 'manage');
    const p = { id: newId(), leadId: lead.id, amountMinor, note, createdAt };
    await tx.leads.addPayment(p);
    return p;
  });
  return {
    id: payment.id,
    lead: payment.leadId,
    amount: formatMinor(payment.amountMinor),
    comment: note,
    created_at: payment.createdAt,
  };
}
