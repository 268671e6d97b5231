// The integration page's actions: import a legacy key, issue the v1 key, renew, revoke one key, switch
// off (and force it), roll back. Each calls the service the admin API's route calls, with the same
// rules; the console only reads the form, names the signed-in person as the actor and shows the answer.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { AppError } from '../errors.js';
import type { Integration } from '../rules/catalog.js';
import type { RulesHolder } from '../rules/loader.js';
import { importLegacyKey, issueV1Key, renewKeys, revokeKey, rollback, switchOff, type MigrationDeps } from '../migration/service.js';
import { ImportKeyBodySchema, ReasonBodySchema, RollbackBodySchema } from '../admin/schemas.js';
import { integrationForViewer } from './overview.js';
import type { Viewer } from './users.js';

const hidden = { schema: { hide: true } };

/** What an action's answer adds to the integration page. */
export interface IntegrationExtras {
  /** A key just issued: shown on this answer only, never stored or shown again. */
  issued?: { secret: string; prefix: string; heading: string } | null;
  /** Why the action was refused, with what the person needs to decide what to do next. */
  refusal?: { status: number; detail: string; lastLegacyCall: string | null; canForce: boolean } | null;
}

interface Helpers {
  signedIn(request: FastifyRequest, reply: FastifyReply): Viewer | null;
  showIntegration(reply: FastifyReply, integration: Integration, extra?: IntegrationExtras): Promise<FastifyReply>;
}

/**
 * Acting on an integration is the service team's: a workspace owner's console reads only (the admin
 * API, where these actions come from, is the service team's too). Another workspace is a 404 before this.
 */
export function refuseUnlessServiceTeam(viewer: Viewer): void {
  if (viewer.workspace !== null) throw new AppError('forbidden', "Changing an integration is the service team's; a workspace owner's console shows it only.");
}

const form = (request: FastifyRequest): Record<string, string> => {
  const body = (request.body ?? {}) as Record<string, unknown>;
  return Object.fromEntries(Object.entries(body).filter((e): e is [string, string] => typeof e[1] === 'string'));
};
/** An empty field is a field not filled in. */
const filled = (value: string | undefined): string | undefined => (value === undefined || value.trim() === '' ? undefined : value.trim());

/** The admin API's body schema decides what a form may hold: a console refusal says what the API's would. */
function parsed<T extends z.ZodType>(schema: T, value: unknown): z.infer<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  throw new AppError('validation-failed', `${issue.path.join('.') || 'form'}: ${issue.message}`);
}

/** The optional reason of a form, by the admin API's rule (no control characters, at most 1,000 characters). */
const reasonOf = (fields: Record<string, string>): string | null => {
  const value = filled(fields.reason);
  return value === undefined ? null : (parsed(ReasonBodySchema, { reason: value })?.reason ?? null);
};

export function consoleActions(app: FastifyInstance, deps: MigrationDeps & { rules: RulesHolder }, h: Helpers): void {
  type Act = (ctx: { viewer: Viewer; integration: Integration; fields: Record<string, string>; request: FastifyRequest; reply: FastifyReply }) => Promise<FastifyReply>;

  const back = (reply: FastifyReply, integration: Integration) => reply.redirect(`/console/integrations/${encodeURIComponent(integration.handle)}`, 303);

  function act(path: string, run: Act): void {
    app.post(`/console/integrations/:integration/${path}`, hidden, async (request, reply) => {
      const viewer = h.signedIn(request, reply)!;
      const integration = integrationForViewer(deps.rules.current(), viewer, (request.params as { integration: string }).integration);
      refuseUnlessServiceTeam(viewer);
      try {
        return await run({ viewer, integration, fields: form(request), request, reply });
      } catch (error) {
        // A refusal of the rules (a conflict, a form the API's schema refuses) is shown on the page the
        // person acted from, with its status; anything else is the console's error page.
        if (!(error instanceof AppError) || (error.code !== 'conflict' && error.code !== 'validation-failed')) throw error;
        const lastLegacyCall = typeof error.extra.last_legacy_call === 'string' ? error.extra.last_legacy_call : null;
        const canForce = path.startsWith('switch-off') && error.extra.state === 'migrating' && (lastLegacyCall !== null || path === 'switch-off/force');
        return h.showIntegration(reply.code(error.status), integration, { refusal: { status: error.status, detail: error.message, lastLegacyCall, canForce } });
      }
    });
  }

  act('keys/import', async ({ viewer, integration, fields, reply }) => {
    const body = parsed(ImportKeyBodySchema, { key: filled(fields.key) ?? '', reason: filled(fields.reason) });
    await importLegacyKey(deps, integration, { key: body.key, actor: viewer.name, reason: body.reason ?? null });
    return back(reply, integration);
  });

  act('keys/issue', async ({ viewer, integration, fields, reply }) => {
    const issued = await issueV1Key(deps, integration, { actor: viewer.name, reason: reasonOf(fields) });
    // Shown in this answer only (no redirect to a page that could show it again); pages are no-store.
    return h.showIntegration(reply, integration, { issued: { secret: issued.secret, prefix: issued.key.prefix, heading: 'The new v1 key' } });
  });

  act('keys/renew', async ({ viewer, integration, fields, reply }) => {
    const renewed = await renewKeys(deps, integration, { actor: viewer.name, reason: reasonOf(fields) });
    return h.showIntegration(reply, integration, {
      issued: { secret: renewed.secret, prefix: renewed.key.prefix, heading: `Keys renewed: ${renewed.revoked} key(s) revoked, this new v1 key issued` },
    });
  });

  app.post('/console/integrations/:integration/keys/:key/revoke', hidden, async (request, reply) => {
    const viewer = h.signedIn(request, reply)!;
    const params = request.params as { integration: string; key: string };
    const integration = integrationForViewer(deps.rules.current(), viewer, params.integration);
    refuseUnlessServiceTeam(viewer);
    try {
      await revokeKey(deps, integration, params.key, { actor: viewer.name, reason: reasonOf(form(request)) });
    } catch (error) {
      if (!(error instanceof AppError) || error.code !== 'conflict') throw error;
      return h.showIntegration(reply.code(error.status), integration, { refusal: { status: error.status, detail: error.message, lastLegacyCall: null, canForce: false } });
    }
    return back(reply, integration);
  });

  act('switch-off', async ({ viewer, integration, fields, reply }) => {
    await switchOff(deps, integration, { actor: viewer.name, reason: reasonOf(fields), force: false });
    return back(reply, integration);
  });

  act('switch-off/force', async ({ viewer, integration, fields, reply }) => {
    // Forcing cuts off a bot that called within the quiet period: the handle typed in is the proof
    // that the person means this integration, as a repository's name is before deleting it.
    if (fields.confirm?.trim() !== integration.handle) {
      throw new AppError('validation-failed', `To force the switch-off, type the integration's handle, ${integration.handle}, exactly. Nothing was changed.`, { state: 'migrating' });
    }
    await switchOff(deps, integration, { actor: viewer.name, reason: reasonOf(fields) ?? 'forced from the console', force: true });
    return back(reply, integration);
  });

  act('rollback', async ({ viewer, integration, fields, reply }) => {
    const body = parsed(RollbackBodySchema, { reason: filled(fields.reason) ?? '' });
    await rollback(deps, integration, { actor: viewer.name, reason: body.reason });
    return back(reply, integration);
  });
}
