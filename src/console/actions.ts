// The integration page's actions: import a legacy key, issue the v1 key or a v1 test key, renew, revoke
// one key, switch off (and force it), roll back, mark ported and clear the flag, schedule the switch-off,
// add and cancel brownout windows (brownout-actions.ts). Each calls the service the admin API's route calls, with the same
// rules; the console only reads the form, names the signed-in person as the actor and shows the answer.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { AppError } from '../errors.js';
import type { Integration } from '../rules/catalog.js';
import type { RulesHolder } from '../rules/loader.js';
import {
  importLegacyKey,
  issueTestKey,
  issueV1Key,
  renewKeys,
  revokeKey,
  rollback,
  switchOff,
  type MigrationDeps,
  type WithIssued,
} from '../migration/service.js';
import { ImportKeyBodySchema, PortedBodySchema, ReasonBodySchema, RollbackBodySchema } from '../admin/schemas.js';
import { clearPorted, markPorted } from '../migration/porting.js';
import { cancelScheduledSwitchOff, scheduleSwitchOff, ScheduleInputSchema } from '../migration/schedule.js';
import { listKeys, liveKeys } from '../migration/reads.js';
import { brownoutActions } from './brownout-actions.js';
import { filled, parsed } from './form-fields.js';
import { integrationForViewer } from './overview.js';
import { CONFIRMED, ConsoleIntegrationParamsSchema, ConsoleKeyParamsSchema } from './schemas.js';
import type { ConsoleFlash } from './flash.js';
import type { Viewer } from './users.js';

/** What an action's answer adds to the integration page. */
export interface IntegrationExtras {
  /** Keys just issued: shown on this answer only, never stored or shown again. */
  issued?: readonly { secret: string; prefix: string; heading: string }[];
  /** Why the action was refused, with what the person needs to decide what to do next (the reason they typed kept). */
  refusal?: { status: number; detail: string; lastLegacyCall: string | null; canForce: boolean; reason: string } | null;
}

/** A confirmation step: what the action does that cannot be taken back, and the form that does it. */
export interface ConfirmStep {
  integration: Integration;
  /** The action's path under the integration's, posted again with confirm=yes. */
  action: string;
  heading: string;
  consequence: string;
  button: string;
  /** Styled apart (class "destructive"): it cuts something off. */
  destructive: boolean;
  reason: string;
}

interface Helpers {
  signedIn(request: FastifyRequest, reply: FastifyReply): Viewer | null;
  showIntegration(reply: FastifyReply, integration: Integration, extra?: IntegrationExtras): Promise<FastifyReply>;
  confirm(reply: FastifyReply, step: ConfirmStep): FastifyReply;
  flash: ConsoleFlash;
}

/**
 * Acting on an integration is the service team's: a workspace owner's console reads only (the admin
 * API, where these actions come from, is the service team's too). Another workspace is a 404 before this.
 */
export function refuseUnlessServiceTeam(viewer: Viewer): void {
  if (viewer.workspace !== null)
    throw new AppError(
      'forbidden',
      "Changing an integration is the service team's; a workspace owner's console shows it only.",
    );
}

const form = (request: FastifyRequest): Record<string, string> => {
  const body = (request.body ?? {}) as Record<string, unknown>;
  return Object.fromEntries(Object.entries(body).filter((e): e is [string, string] => typeof e[1] === 'string'));
};
/** The optional reason of a form, by the admin API's rule (no control characters, at most 1,000 characters). */
const reasonOf = (fields: Record<string, string>): string | null => {
  const value = filled(fields.reason);
  return value === undefined ? null : (parsed(ReasonBodySchema, { reason: value })?.reason ?? null);
};

/** What an action of the integration page runs, once the viewer may act on the integration. */
export type Act = (ctx: {
  viewer: Viewer;
  integration: Integration;
  fields: Record<string, string>;
  request: FastifyRequest;
  reply: FastifyReply;
}) => Promise<FastifyReply>;

export function consoleActions(app: FastifyInstance, deps: MigrationDeps & { rules: RulesHolder }, h: Helpers): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();

  // Every change answers with a redirect to the integration's page (POST, redirect, GET): a reload of
  // that page repeats nothing. A key issued travels there as a sealed one-time value (flash.ts).
  const back = (reply: FastifyReply, integration: Integration) =>
    reply.redirect(`/console/integrations/${encodeURIComponent(integration.handle)}`, 303);
  /** Keeps the key for the page the redirect leads to, in the unit that issues it: no key stands that does not wait to be shown. */
  const keepFor =
    (request: FastifyRequest, heading: string | ((issued: Parameters<WithIssued>[1]) => string)): WithIssued =>
    (tx, issued) =>
      h.flash.keep(tx, request, {
        integration: issued.key.integrationId,
        keyId: issued.key.id,
        secret: issued.secret,
        prefix: issued.key.prefix,
        heading: typeof heading === 'string' ? heading : heading(issued),
      });

  /** What a refusal of the rules shows on the integration page, with the reason the person typed kept. */
  function refused(
    reply: FastifyReply,
    integration: Integration,
    error: unknown,
    canForceFrom: string | null,
    fields: Record<string, string>,
  ) {
    // A refusal of the rules (a conflict, a form the API's schema refuses) is shown on the page the
    // person acted from, with its status; anything else is the console's error page.
    if (!(error instanceof AppError) || !['conflict', 'validation-failed', 'limit-reached'].includes(error.code))
      throw error;
    const lastLegacyCall = typeof error.extra.last_legacy_call === 'string' ? error.extra.last_legacy_call : null;
    const canForce =
      canForceFrom !== null &&
      error.extra.state === 'migrating' &&
      (lastLegacyCall !== null || canForceFrom === 'switch-off/force');
    const reason = (fields.reason ?? '').slice(0, 1000);
    return h.showIntegration(reply.code(error.status), integration, {
      refusal: { status: error.status, detail: error.message, lastLegacyCall, canForce, reason },
    });
  }

  /** `owners`: a workspace owner may take it too (only marking ported, docs/console.md "Who can do what"). */
  function act(path: string, run: Act, options: { owners?: boolean } = {}): void {
    routes.post(
      `/console/integrations/:integration/${path}`,
      { schema: { hide: true, params: ConsoleIntegrationParamsSchema } },
      async (request, reply) => {
        const viewer = h.signedIn(request, reply)!;
        const integration = integrationForViewer(deps.rules.current(), viewer, request.params.integration);
        if (options.owners !== true) refuseUnlessServiceTeam(viewer);
        const fields = form(request);
        try {
          return await run({ viewer, integration, fields, request, reply });
        } catch (error) {
          return refused(reply, integration, error, path.startsWith('switch-off') ? path : null, fields);
        }
      },
    );
  }

  /**
   * A change that cannot be taken back asks first, on the server: the form's answer is a page naming the
   * consequence, whose button sends the same form again with confirm=yes. Works without script.
   */
  const confirmed = (fields: Record<string, string>) => fields.confirm === CONFIRMED;
  function askFirst(
    reply: FastifyReply,
    integration: Integration,
    step: Omit<ConfirmStep, 'integration' | 'reason'>,
    fields: Record<string, string>,
  ) {
    return h.confirm(reply, { ...step, integration, reason: (fields.reason ?? '').slice(0, 1000) });
  }

  act('keys/import', async ({ viewer, integration, fields, reply }) => {
    const body = parsed(ImportKeyBodySchema, { key: filled(fields.key) ?? '', reason: filled(fields.reason) });
    await importLegacyKey(deps, integration, { key: body.key, actor: viewer.name, reason: body.reason ?? null });
    return back(reply, integration);
  });

  act('keys/issue', async ({ viewer, integration, fields, request, reply }) => {
    const live = await liveKeys(deps.store, integration, 'v1');
    if (live.length > 0 && !confirmed(fields)) {
      return askFirst(
        reply,
        integration,
        {
          action: 'keys/issue',
          heading: 'Issue another v1 key?',
          consequence: `${integration.name} already has ${live.length} live v1 key(s) (${live.map((k) => k.prefix).join(', ')}). Another one is a second working credential: the bot uses one, and the other stays live until revoked. To replace the key, revoke the old one after the bot has the new one.`,
          button: 'Issue another v1 key',
          destructive: false,
        },
        fields,
      );
    }
    await issueV1Key(
      deps,
      integration,
      { actor: viewer.name, reason: reasonOf(fields) },
      { within: keepFor(request, 'The new v1 key') },
    );
    return back(reply, integration);
  });

  act('keys/test', async ({ viewer, integration, fields, request, reply }) => {
    // A test key moves no state and keeps nothing its calls send: no confirmation, as the admin API asks none.
    await issueTestKey(
      deps,
      integration,
      { actor: viewer.name, reason: reasonOf(fields) },
      keepFor(request, 'The new v1 test key (for the bot author; its calls keep nothing)'),
    );
    return back(reply, integration);
  });

  act('keys/renew', async ({ viewer, integration, fields, request, reply }) => {
    if (!confirmed(fields)) {
      const live = (await listKeys(deps.store, integration)).filter((k) => k.revokedAt === null);
      const legacy = live.filter((k) => k.kind === 'legacy').length;
      return askFirst(
        reply,
        integration,
        {
          action: 'keys/renew',
          heading: 'Renew: revoke every key?',
          consequence: `Every live key of ${integration.name} is revoked at once (${live.length} now${legacy > 0 ? `, ${legacy} of them legacy: the legacy bot is cut off, its next call is refused` : ''}), and one new v1 key is issued. Whatever still calls with an old key is refused from the next request.`,
          button: 'Revoke every key and issue one v1 key',
          destructive: true,
        },
        fields,
      );
    }
    await renewKeys(
      deps,
      integration,
      { actor: viewer.name, reason: reasonOf(fields) },
      keepFor(request, (issued) => `Keys renewed: ${issued.revoked ?? 0} key(s) revoked, this new v1 key issued`),
    );
    return back(reply, integration);
  });

  routes.post(
    '/console/integrations/:integration/keys/:key/revoke',
    { schema: { hide: true, params: ConsoleKeyParamsSchema } },
    async (request, reply) => {
      const viewer = h.signedIn(request, reply)!;
      const integration = integrationForViewer(deps.rules.current(), viewer, request.params.integration);
      refuseUnlessServiceTeam(viewer);
      const fields = form(request);
      try {
        if (!confirmed(fields)) {
          const key = (await listKeys(deps.store, integration)).find((k) => k.id === request.params.key);
          if (key === undefined)
            throw new AppError('not-found', `No key "${request.params.key}" for ${integration.handle}.`);
          return await askFirst(
            reply,
            integration,
            {
              action: `keys/${encodeURIComponent(key.id)}/revoke`,
              heading: `Revoke the ${key.kind} key ${key.prefix}?`,
              consequence:
                key.kind === 'legacy'
                  ? `The legacy bot calling with ${key.prefix} is cut off: its next call is refused (401). This cannot be undone; the key would have to be imported again.`
                  : `Whatever calls the v1 API with ${key.prefix} is refused (401) from its next request. This cannot be undone; a new key would have to be issued.`,
              button: `Revoke ${key.prefix}`,
              destructive: true,
            },
            fields,
          );
        }
        await revokeKey(deps, integration, request.params.key, { actor: viewer.name, reason: reasonOf(fields) });
      } catch (error) {
        return refused(reply, integration, error, null, fields);
      }
      return back(reply, integration);
    },
  );

  act('switch-off', async ({ viewer, integration, fields, reply }) => {
    await switchOff(deps, integration, { actor: viewer.name, reason: reasonOf(fields), force: false });
    return back(reply, integration);
  });

  act('switch-off/force', async ({ viewer, integration, fields, reply }) => {
    // Forcing cuts off a bot that called within the quiet period: the handle typed in is the proof
    // that the person means this integration, as a repository's name is before deleting it.
    if (fields.confirm?.trim() !== integration.handle) {
      throw new AppError(
        'validation-failed',
        `To force the switch-off, type the integration's handle, ${integration.handle}, exactly. Nothing was changed.`,
        { state: 'migrating' },
      );
    }
    await switchOff(deps, integration, {
      actor: viewer.name,
      reason: reasonOf(fields) ?? 'forced from the console',
      force: true,
    });
    return back(reply, integration);
  });

  act(
    'ported',
    async ({ viewer, integration, fields, reply }) => {
      const body = parsed(PortedBodySchema, { note: filled(fields.note) });
      await markPorted(deps, integration, {
        actor: viewer.name,
        note: body?.note ?? null,
        role: viewer.workspace === null ? 'service_team' : 'owner',
      });
      return back(reply, integration);
    },
    { owners: true },
  );

  act('ported/clear', async ({ viewer, integration, fields, reply }) => {
    if (!confirmed(fields)) {
      return askFirst(
        reply,
        integration,
        {
          action: 'ported/clear',
          heading: 'Clear the ported flag?',
          consequence: `${integration.name} is no longer shown as ported: the owner's mark (who, when, the note) leaves the page, the overview and the readiness reasons, and stays only in the audit trail. The owner may mark it again.`,
          button: 'Clear the ported flag',
          destructive: true,
        },
        fields,
      );
    }
    await clearPorted(deps, integration, { actor: viewer.name, reason: reasonOf(fields), role: 'service_team' });
    return back(reply, integration);
  });

  act('switch-off/schedule', async ({ viewer, integration, fields, reply }) => {
    // A datetime-local field has no zone: the page says the time is UTC.
    const at = filled(fields.at);
    const body = parsed(ScheduleInputSchema, {
      at:
        at !== undefined && /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d)?$/.test(at)
          ? `${at.length === 16 ? `${at}:00` : at}Z`
          : at,
      force: fields.force === 'yes',
      ...(filled(fields.retry_minutes) === undefined ? {} : { retry_minutes: Number(fields.retry_minutes) }),
      ...(filled(fields.reason) === undefined ? {} : { reason: filled(fields.reason) }),
    });
    await scheduleSwitchOff(deps, integration, { ...body, actor: viewer.name });
    return back(reply, integration);
  });

  act('switch-off/schedule/cancel', async ({ viewer, integration, reply }) => {
    await cancelScheduledSwitchOff(deps, integration, { actor: viewer.name });
    return back(reply, integration);
  });

  brownoutActions(act, back, deps);

  act('rollback', async ({ viewer, integration, fields, reply }) => {
    const body = parsed(RollbackBodySchema, { reason: filled(fields.reason) ?? '' });
    await rollback(deps, integration, { actor: viewer.name, reason: body.reason });
    return back(reply, integration);
  });
}
