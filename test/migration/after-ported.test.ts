// A legacy call after the integration was marked "ported" is told to the service team once per mark:
// an audit entry (legacy_call_after_ported, actor calendar) written by the flush that counts the call.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../helper.js';
import { PORTED_FLAGS_TTL_MS } from '../../src/migration/after-ported.js';

const HANDLE = 'brightpath:telegram-bot';
const KEY = 'after-ported-legacy-key-0123456789';

let gw: Gateway;
beforeAll(async () => {
  gw = await startGateway();
  expect((await gw.admin('POST', `/admin/v1/integrations/${HANDLE}/keys/import`, { key: KEY })).statusCode).toBe(201);
  await gw.issueKey(HANDLE);
});
afterAll(() => gw.close());

const legacyCall = () =>
  gw.app.inject({ method: 'GET', url: '/api/bots/api/leads/', headers: { 'x-bot-api-key': KEY } });
/** The entries told so far; the report flushes this process's counts first. */
const told = async () => {
  await gw.admin('GET', `/admin/v1/integrations/${HANDLE}/report`);
  return (await gw.admin('GET', `/admin/v1/integrations/${HANDLE}/audit`))
    .json<{ items: { action: string; actor: string; details: Record<string, unknown> }[] }>()
    .items.filter((e) => e.action === 'legacy_call_after_ported');
};

describe('a legacy call after "ported"', () => {
  it('is told once per mark, naming the mark and the call; calls before the mark are not', async () => {
    expect((await legacyCall()).statusCode).toBe(200);
    expect(await told()).toEqual([]);

    expect((await gw.admin('POST', `/admin/v1/integrations/${HANDLE}/ported`, { note: 'moved' })).statusCode).toBe(200);
    // The flush reads the marks at most once a second (PORTED_FLAGS_TTL_MS).
    await new Promise((resolve) => setTimeout(resolve, PORTED_FLAGS_TTL_MS + 100));
    expect((await legacyCall()).statusCode).toBe(200);
    const first = await told();
    expect(first).toHaveLength(1);
    expect(first[0]).toMatchObject({ actor: 'calendar', details: { ported_by: expect.any(String) } });
    expect(first[0]!.details.call_at! > first[0]!.details.ported_at!).toBe(true);

    // More calls: nothing more told for this mark.
    expect((await legacyCall()).statusCode).toBe(200);
    expect(await told()).toHaveLength(1);
  });

  it('is told again for a new mark after the flag was cleared and set again', async () => {
    expect(await told()).toHaveLength(1);
    expect((await gw.admin('DELETE', `/admin/v1/integrations/${HANDLE}/ported`)).statusCode).toBe(200);
    expect((await gw.admin('POST', `/admin/v1/integrations/${HANDLE}/ported`, { note: 'again' })).statusCode).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, PORTED_FLAGS_TTL_MS + 100));
    expect((await legacyCall()).statusCode).toBe(200);
    const entries = await told();
    expect(entries).toHaveLength(2);
    // Two marks, two moments: each entry names its own mark.
    expect(new Set(entries.map((e) => e.details.ported_at)).size).toBe(2);
  });
});
