// A legacy POST without an Idempotency-Key is one event per body and day: a retry finds the event of
// its own day or, within 24 h of it, of the day before; later it is a new inquiry. The clock is the
// service's own (LegacyDeps.now), so crossing midnight takes no waiting.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../helper.js';
import { createLegacyLead, legacyEvent, type LegacyDeps } from '../../src/legacy/service.js';
import { KNOWN_EVENTS_MAX, KNOWN_EVENTS_TTL_MS, limitKnownEvents } from '../../src/idempotency/known-events.js';
import { createUsageRecorder, type UsageRecorder } from '../../src/migration/usage.js';
import type { Integration } from '../../src/rules/catalog.js';

let gw: Gateway;
let integration: Integration;
let deps: (at: string) => LegacyDeps;
let usage: UsageRecorder;

beforeAll(async () => {
  gw = await startGateway();
  integration = gw.rules.current().findIntegration('brightpath:telegram-bot')!;
  usage = createUsageRecorder(gw.store);
  deps = (at) => ({ store: gw.store, usage, now: () => new Date(at) });
});
afterAll(async () => {
  await usage.close();
  await gw.close();
});

describe('legacy POST leads/ in day buckets', () => {
  it('replays a retry across midnight within 24 h, and makes a new inquiry of the same body after 24 h', async () => {
    const body = { first_name: 'Midnight', phone: '+49 170 5550101', extra_data: { telegram_id: 4242 } };
    const first = await createLegacyLead(deps('2026-03-01T23:00:00Z'), integration, body, undefined);
    expect(first.replayed).toBe(false);

    // Two hours later, the next day's bucket: the event of the day before is found and replayed.
    const retry = await createLegacyLead(deps('2026-03-02T01:00:00Z'), integration, body, undefined);
    expect(retry).toMatchObject({ replayed: true, lead: { id: first.lead!.id } });
    // So on a gateway that never saw it (its memory of events emptied): both days' events are looked for in the unit.
    limitKnownEvents(gw.store, { max: KNOWN_EVENTS_MAX, ttlMs: KNOWN_EVENTS_TTL_MS });
    const elsewhere = await createLegacyLead(deps('2026-03-02T02:00:00Z'), integration, body, undefined);
    expect(elsewhere).toMatchObject({ replayed: true, lead: { id: first.lead!.id } });

    // 24.5 h after the first: the same body is a new inquiry (it joins the person's open lead).
    const later = await createLegacyLead(deps('2026-03-02T23:30:00Z'), integration, body, undefined);
    expect(later.replayed).toBe(false);
    // ... whose own retry after the next midnight is a replay of it, not a third inquiry.
    const laterRetry = await createLegacyLead(deps('2026-03-03T00:30:00Z'), integration, body, undefined);
    expect(laterRetry.replayed).toBe(true);

    const recorded = await gw.inspect.submissions.count({ integrationId: integration.id, endpoint: 'leads' });
    expect(recorded).toBe(2);
  });

  it('records one event of two identical POSTs sent together across midnight, and replays it to the other', async (context) => {
    // PostgreSQL looks the day before's event up before the person's locks are held: two units that
    // overlap there may both record (docs/legacy-api.md). SQLite's one writer runs them in turn.
    if (gw.store.engine === 'postgres') return context.skip();
    const body = { first_name: 'Together', phone: '+49 170 5550103' };
    const [a, b] = await Promise.all([
      createLegacyLead(deps('2026-03-07T23:59:59.995Z'), integration, body, undefined),
      createLegacyLead(deps('2026-03-08T00:00:00.001Z'), integration, body, undefined),
    ]);
    expect([a.replayed, b.replayed].sort()).toEqual([false, true]);
    expect(b.lead!.id).toBe(a.lead!.id);
    const recorded = await gw.inspect.submissions.list({ integrationId: integration.id, endpoint: 'leads' }, [
      'eventId',
    ]);
    const prefix = legacyEvent(deps('2026-03-07T12:00:00Z'), integration, 'lead', body, undefined).eventId.slice(0, -5);
    expect(recorded.filter((r) => String(r.eventId).startsWith(prefix))).toHaveLength(1);
  });

  it('names the event by the body and the day, and a retry within 24 h keeps the first id', async () => {
    const body = { first_name: 'Named', phone: '+49 170 5550102' };
    const first = legacyEvent(deps('2026-03-05T12:00:00Z'), integration, 'lead', body, undefined);
    expect(first.eventId).toMatch(/^legacy:lead:[0-9a-f]{64}:20517$/);
    // The day before's event is looked for beside it, and stands for the request only within 24 h of its record.
    expect(first.earlier?.eventId).toBe(first.eventId.replace(/20517$/, '20516'));
    expect(first.earlier?.holds('2026-03-04T12:00:01Z')).toBe(true);
    expect(first.earlier?.holds('2026-03-04T12:00:00Z')).toBe(false);
    expect((await createLegacyLead(deps('2026-03-05T12:00:00Z'), integration, body, undefined)).replayed).toBe(false);
    expect((await createLegacyLead(deps('2026-03-06T11:59:00Z'), integration, body, undefined)).replayed).toBe(true);
    expect((await createLegacyLead(deps('2026-03-06T12:01:00Z'), integration, body, undefined)).replayed).toBe(false);
    const recorded = await gw.inspect.submissions.list({ integrationId: integration.id, endpoint: 'leads' }, [
      'eventId',
    ]);
    expect(recorded.map((r) => r.eventId).filter((id) => String(id).startsWith(first.eventId.slice(0, -5)))).toEqual([
      first.eventId,
      first.eventId.replace(/20517$/, '20518'),
    ]);
    // Another body, another event; with an Idempotency-Key the id comes from the key alone, and no day before.
    expect(
      legacyEvent(deps('2026-03-05T12:00:00Z'), integration, 'lead', { ...body, first_name: 'Other' }, undefined)
        .eventId,
    ).not.toBe(first.eventId);
    expect(legacyEvent(deps('2026-03-05T12:00:00Z'), integration, 'lead', body, 'bot-req-9')).toEqual({
      eventId: 'legacy:lead:key:bot-req-9',
    });
  });
});
