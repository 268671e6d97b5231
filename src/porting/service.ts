// The porting guide's reads: the counts written first, then one snapshot of the integration's state,
// its legacy calls in the guide's window, their samples, ignored members and the tags its bots created.
import type { Integration } from '../rules/catalog.js';
import type { MigrationDeps } from '../migration/service.js';
import { buildGuide, GUIDE_WINDOW_DAYS, type PortingGuide } from './guide.js';

export async function portingGuide(deps: MigrationDeps, integration: Integration): Promise<PortingGuide> {
  // Written first, as for the report: the samples and counts of the last quarter second are in it.
  await deps.usage.flush();
  const now = deps.now?.() ?? new Date();
  const since = new Date(now.getTime() - GUIDE_WINDOW_DAYS * 86_400_000).toISOString().slice(0, 13);
  const data = await deps.store.snapshot(async (r) => {
    const samples = await r.states.samples(integration.id);
    const createdTags = new Map<string, string>();
    for (const s of samples) {
      const body = (s.sample as { body?: unknown }).body;
      const ids =
        body !== null && typeof body === 'object' && Array.isArray((body as { tag_ids?: unknown }).tag_ids)
          ? (body as { tag_ids: unknown[] }).tag_ids
          : [];
      for (const id of ids) {
        if (typeof id !== 'string' || integration.workspace.tags.has(id) || createdTags.has(id)) continue;
        const tag = await r.legacyTags.get(integration.workspace.id, id);
        if (tag) createdTags.set(id, tag.name);
      }
    }
    return {
      state: await r.states.get(integration.id),
      usage: await r.states.usageSince(integration.id, since),
      // Names last seen within the window: a member the bot stopped sending is no longer its to-do.
      ignored: (await r.states.ignoredFields(integration.id)).filter((f) => f.lastSeen >= since),
      samples,
      createdTags,
    };
  });
  return buildGuide({ integration, now, ...data });
}
