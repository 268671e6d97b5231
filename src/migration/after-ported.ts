// A legacy call that arrives after the integration was marked "ported" (src/migration/porting.ts):
// the service team is told once per mark, with an audit entry (`legacy_call_after_ported`, actor
// `calendar`) and an info log line, from the usage recorder's flush that counts the call.
import type { FastifyBaseLogger } from 'fastify';
import type { Repos } from '../store/store.js';
import type { UsageIncrement } from '../store/repos/states.js';
import { newId } from '../store/ids.js';
import type { Integration } from '../rules/catalog.js';
import { aboutIntegration, writeEvent } from '../webhooks/outbox.js';

/** The rules' integration of an id, if the rules still name it. */
export type IntegrationOf = (integrationId: string) => Integration | undefined;

/** How long a process trusts the ported marks it read: a flush with legacy calls reads them (one statement) at most this often. */
export const PORTED_FLAGS_TTL_MS = 1_000;

/** The ported marks as a process remembers them: by integration, and when they were read. */
export interface PortedMarks {
  byIntegration: Map<string, { at: string; by: string }>;
  readAt: number;
}

export interface Told {
  integrationId: string;
  portedAt: string;
  callAt: string;
}

/**
 * Tells, in the flush's unit, the first legacy call of `batch` after each integration's ported mark:
 * `marks` are every integration's marks, read again when older than PORTED_FLAGS_TTL_MS (a call within
 * a second of a mark may go untold). The mark's moment is recorded (calendar_moments), so of several
 * replicas one tells it.
 */
export async function tellLegacyAfterPorted(
  tx: Repos,
  batch: readonly UsageIncrement[],
  marks: PortedMarks,
  now: Date,
  integrationOf?: IntegrationOf,
): Promise<Told[]> {
  const lastLegacy = new Map<string, string>();
  for (const u of batch)
    if (u.interface === 'legacy' && (lastLegacy.get(u.integrationId) ?? '') < u.lastSeen)
      lastLegacy.set(u.integrationId, u.lastSeen);
  const told: Told[] = [];
  if (lastLegacy.size === 0) return told;
  if (now.getTime() - marks.readAt > PORTED_FLAGS_TTL_MS) {
    marks.byIntegration = new Map((await tx.states.allPorted()).map((f) => [f.integrationId, { at: f.at, by: f.by }]));
    marks.readAt = now.getTime();
  }
  for (const [integrationId, callAt] of lastLegacy) {
    const flag = marks.byIntegration.get(integrationId);
    if (flag === undefined || callAt <= flag.at) continue;
    const at = now.toISOString();
    if (!(await tx.schedules.recordMoment(integrationId, 'legacy_after_ported', flag.at, at))) continue;
    const state = await tx.states.get(integrationId);
    await tx.states.addAudit({
      id: newId(),
      integrationId,
      action: 'legacy_call_after_ported',
      fromState: state,
      toState: state,
      actor: 'calendar',
      reason: null,
      details: { ported_at: flag.at, ported_by: flag.by, call_at: callAt },
      at,
    });
    const integration = integrationOf?.(integrationId);
    if (integration)
      await writeEvent(
        tx,
        'integration.legacy_call_after_ported',
        integration.workspace.id,
        { ...aboutIntegration(integration), ported_at: flag.at, call_at: callAt },
        at,
      );
    told.push({ integrationId, portedAt: flag.at, callAt });
  }
  return told;
}

/** The log line of each call told, once its unit committed. */
export function logTold(log: FastifyBaseLogger | undefined, told: readonly Told[]): void {
  for (const t of told)
    log?.info(
      { integration_id: t.integrationId, ported_at: t.portedAt, call_at: t.callAt },
      'legacy call after ported',
    );
}
