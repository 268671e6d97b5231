// An integration's answers and review pages: the answer keys no mapping takes yet (with the YAML that
// would map each), "apply stored answers", and the submissions that need review. The services are the
// admin API's own; a workspace owner sees and applies only their workspace's.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Store } from '../store/store.js';
import type { Integration } from '../rules/catalog.js';
import type { RulesHolder } from '../rules/loader.js';
import { KEPT_ANSWERS_PER_KEY, KEPT_BYTES_PER_INTEGRATION, KEPT_KEYS_PER_INTEGRATION } from '../answers/keep.js';
import {
  applyStoredAnswers,
  EXAMPLE_VALUE_CHARS,
  UNMAPPED_ANSWERS_SCANNED,
  UNMAPPED_EXAMPLES_PER_KEY,
  UNMAPPED_KEYS_SHOWN,
  unmappedAnswerKeys,
} from '../answers/unmapped.js';
import { APPLY_STORED_MAX, type UnmappedApplication } from '../answers/engine.js';
import { listReview } from '../migration/reads.js';
import { integrationForViewer } from './overview.js';
import { ConsoleIntegrationParamsSchema } from './schemas.js';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { render } from './pages.js';
import type { Viewer } from './users.js';

/** Submissions needing review listed, newest first (the admin API's GET .../review pages further). */
export const REVIEW_ITEMS_SHOWN = 100;

interface Helpers {
  signedIn(request: FastifyRequest, reply: FastifyReply): Viewer | null;
}

/** What applying told, counted by outcome, for the page. */
function appliedSummary(report: UnmappedApplication) {
  const outcomes: Record<string, number> = { written: 0, unchanged: 0, kept_existing: 0, invalid: 0 };
  for (const a of report.applied) outcomes[a.outcome] = (outcomes[a.outcome] ?? 0) + 1;
  return {
    applied: report.applied.length,
    outcomes,
    stillUnmapped: report.still_unmapped,
    skippedDeletedLead: report.skipped_deleted_lead,
    remaining: report.remaining,
  };
}

export function answerRoutes(app: FastifyInstance, deps: { store: Store; rules: RulesHolder }, h: Helpers): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  const withParams = { schema: { hide: true, params: ConsoleIntegrationParamsSchema } };
  const integrationOf = (request: { params: { integration: string } }, viewer: Viewer) =>
    integrationForViewer(deps.rules.current(), viewer, request.params.integration);

  async function showAnswers(
    reply: FastifyReply,
    integration: Integration,
    applied: ReturnType<typeof appliedSummary> | null = null,
  ) {
    const { keys, totalKeys, capped, notKept } = await unmappedAnswerKeys(deps.store, integration);
    const limits = {
      keys: UNMAPPED_KEYS_SHOWN,
      examples: UNMAPPED_EXAMPLES_PER_KEY,
      chars: EXAMPLE_VALUE_CHARS,
      scanned: UNMAPPED_ANSWERS_SCANNED,
      applyMax: APPLY_STORED_MAX,
      keptKeys: KEPT_KEYS_PER_INTEGRATION,
      keptPerKey: KEPT_ANSWERS_PER_KEY,
      keptMiB: KEPT_BYTES_PER_INTEGRATION / 1_048_576,
    };
    return render(reply, 'answers', {
      title: `Unmapped answers · ${integration.name}`,
      integration,
      keys,
      totalKeys,
      capped,
      notKept,
      limits,
      applied,
    });
  }

  routes.get('/console/integrations/:integration/answers', withParams, async (request, reply) => {
    const viewer = h.signedIn(request, reply);
    if (viewer === null) return reply;
    return showAnswers(reply, integrationOf(request, viewer));
  });

  // Applying maps nothing new: it takes the stored answers through the mapping the workspace's rules
  // already have, so a workspace owner may do it for their own integrations (audited under their name).
  routes.post('/console/integrations/:integration/answers/apply', withParams, async (request, reply) => {
    const viewer = h.signedIn(request, reply)!;
    const integration = integrationOf(request, viewer);
    const report = await applyStoredAnswers(deps.store, integration, { actor: viewer.name });
    request.log.info(
      { console_user: viewer.name, integration: integration.handle, applied: report.applied.length },
      'stored answers applied',
    );
    return showAnswers(reply, integration, appliedSummary(report));
  });

  routes.get('/console/integrations/:integration/review', withParams, async (request, reply) => {
    const viewer = h.signedIn(request, reply);
    if (viewer === null) return reply;
    const integration = integrationOf(request, viewer);
    const items = await listReview(deps.store, integration, REVIEW_ITEMS_SHOWN);
    return render(reply, 'review', {
      title: `Needs review · ${integration.name}`,
      integration,
      items,
      shown: REVIEW_ITEMS_SHOWN,
    });
  });
}
