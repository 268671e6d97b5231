// Events the usage flush writes in its own unit: the answers 404 list gaining ids is told as
// `answers.unknown_id_listed` (how many ids the list gained), once per id, never for an id listed
// already; the ids themselves stay in the list (docs/webhooks.md, the catalogue).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../helper.js';

const WEBSITE = 'brightpath:website-form';

let gw: Gateway;
let key: string;
beforeAll(async () => {
  gw = await startGateway();
  const res = await gw.admin('POST', '/admin/v1/webhooks/endpoints', {
    url: 'https://hooks.example.com/lead-gateway',
    event_types: ['answers.unknown_id_listed'],
    workspace: gw.rules.current().findIntegration(WEBSITE)!.workspace.id,
  });
  expect(res.statusCode, res.body).toBe(201);
  key = await gw.issueKey(WEBSITE);
});
afterAll(() => gw.close());

const answers = (eventId: string, externalContactId: string) =>
  gw.app.inject({
    method: 'POST',
    url: '/api/integrations/v1/leads/answers/',
    headers: { authorization: `Bearer ${key}` },
    payload: { event_id: eventId, external_contact_id: externalContactId, answers: { laptop: 'yes' } },
  });

/** The `answers.unknown_id_listed` events the outbox holds, after the report flushed this process's counts. */
async function listedEvents(): Promise<{ integration: { handle: string }; listed: number }[]> {
  await gw.admin('GET', `/admin/v1/integrations/${WEBSITE}/report`);
  const ids = (await gw.inspect.dump('webhook_events')).map((row) => String(row[0]));
  const events = await gw.store.snapshot((r) => Promise.all(ids.map((id) => r.webhooks.getEvent(id))));
  return events
    .filter((e) => e!.type === 'answers.unknown_id_listed')
    .map((e) => (JSON.parse(e!.payload) as { data: { integration: { handle: string }; listed: number } }).data);
}
const total = (events: { listed: number }[]) => events.reduce((n, e) => n + e.listed, 0);

describe('the answers 404 list gaining ids', () => {
  it('is an event counting the ids it gained, none for an id listed already', async () => {
    expect(await listedEvents()).toEqual([]);
    expect((await answers('listed-1', 'telegram:listed-1')).statusCode).toBe(404);
    const first = await listedEvents();
    expect(first).toEqual([
      expect.objectContaining({ integration: expect.objectContaining({ handle: WEBSITE }), listed: 1 }),
    ]);

    // The same id again: counted in the list, no new event.
    expect((await answers('listed-2', 'telegram:listed-1')).statusCode).toBe(404);
    expect(await listedEvents()).toHaveLength(1);

    // Two new ids: told, in one event or two (the flush runs on its own timer too), two in all.
    expect((await answers('listed-3', 'telegram:listed-2')).statusCode).toBe(404);
    expect((await answers('listed-4', 'telegram:listed-3')).statusCode).toBe(404);
    expect(total(await listedEvents())).toBe(3);
    // No id of a person is in the event.
    expect(JSON.stringify(await listedEvents())).not.toContain('telegram:');
  });
});
