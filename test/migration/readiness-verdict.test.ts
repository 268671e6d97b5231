// The readiness verdict counts only accepted v1 calls: a bot that gets 422s is not ready to switch.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../helper.js';

let gw: Gateway;
beforeAll(async () => (gw = await startGateway()));
afterAll(() => gw.close());

const report = async (handle: string) => (await gw.admin('GET', `/admin/v1/integrations/${handle}/report`)).json();

describe('readiness verdict', () => {
  it('stays not_ready through refused v1 calls and turns ready with the first accepted one', async () => {
    const handle = 'smile-dental:booking-form';
    const key = await gw.issueKey(handle);
    for (let i = 0; i < 3; i++)
      expect((await gw.submit(key, { event_id: `bad-${i}`, first_name: 'A', stage: 'Won' })).statusCode).toBe(422);
    const refused = await report(handle);
    expect(refused.readiness).toEqual({
      verdict: 'not_ready',
      reasons: ['no v1 call has succeeded yet (every one was refused)'],
    });
    expect(refused.v1).toMatchObject({ calls_24h: 3, successful_7d: 0, last_success: null });

    expect(
      (await gw.submit(key, { event_id: 'good-1', first_name: 'Malika', phone: '+998901230000' })).statusCode,
    ).toBe(201);
    const accepted = await report(handle);
    expect(accepted.readiness).toEqual({ verdict: 'ready', reasons: [] });
    expect(accepted.v1).toMatchObject({ calls_24h: 4, successful_7d: 1, last_success: expect.any(String) });
  });

  it('counts legacy calls of every status, a 401-free 404 included, with their successes apart', async () => {
    const handle = 'brightpath:website-form';
    await gw.admin('POST', `/admin/v1/integrations/${handle}/keys/import`, { key: 'web-form-legacy-key-0001' });
    const legacy = (url: string) =>
      gw.app.inject({ method: 'GET', url, headers: { 'x-bot-api-key': 'web-form-legacy-key-0001' } });
    expect((await legacy('/api/bots/api/boards/')).statusCode).toBe(200);
    expect((await legacy('/api/bots/api/leads/00000000-0000-4000-8000-000000000000/')).statusCode).toBe(404);
    const r = await report(handle);
    expect(r.legacy).toMatchObject({ calls_24h: 2, successful_7d: 1 });
  });
});
