// Isolation, route by route: every v1, legacy and admin route called with the key of another workspace
// or another integration of the same workspace reads nothing of the owner's and writes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { startGateway, type Gateway } from '../helper.js';
import { snapshot } from '../support/snapshot.js';

let gw: Gateway;
const keys = { ownerV1: '', sameWorkspaceV1: '', otherWorkspaceV1: '' };
const LEGACY = { owner: 'isolation-owner-legacy-key-0123', otherWorkspace: 'isolation-dental-legacy-key-0123' };
let ownerLead: { id: string; contact: string };
let legacyLeadId: string;
let legacyTagId: string;
const SECRET_NAME = 'Zarina-owner-only';

beforeAll(async () => {
  gw = await startGateway();
  keys.ownerV1 = await gw.issueKey('brightpath:telegram-bot');
  keys.sameWorkspaceV1 = await gw.issueKey('brightpath:website-form');
  keys.otherWorkspaceV1 = await gw.issueKey('smile-dental:booking-form');
  await gw.admin('POST', '/admin/v1/integrations/brightpath:telegram-bot/keys/import', { key: LEGACY.owner });
  await gw.admin('POST', '/admin/v1/integrations/smile-dental:booking-form/keys/import', {
    key: LEGACY.otherWorkspace,
  });

  const v1 = (
    await gw.submit(keys.ownerV1, {
      event_id: 'own-1',
      external_contact_id: 'telegram:555',
      first_name: SECRET_NAME,
      phone: '+998905550555',
      answers: { age: 31 },
    })
  ).json();
  ownerLead = { id: v1.lead.id, contact: v1.contact_id };
  const legacy = await legacyCall(LEGACY.owner, 'POST', '/api/bots/api/leads/', {
    first_name: SECRET_NAME,
    phone: '+998905550556',
    extra_data: { telegram_id: 556 },
  });
  legacyLeadId = legacy.json().id;
  legacyTagId = (
    await legacyCall(LEGACY.owner, 'POST', '/api/bots/api/tags/create/', { name: 'Owner secret tag' })
  ).json().id;
});
afterAll(() => gw.close());

function legacyCall(key: string, method: string, url: string, body?: unknown): Promise<LightMyRequestResponse> {
  return gw.app.inject({
    method: method as 'GET',
    url,
    headers: { 'x-bot-api-key': key },
    ...(body === undefined ? {} : { payload: body as object }),
  });
}
const v1Call = (key: string, url: string, body: unknown) =>
  gw.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${key}` }, payload: body as object });

/** Runs a foreign call and checks that it left every table as it was and showed nothing of the owner's. */
async function foreign(asked: string, call: () => Promise<LightMyRequestResponse>): Promise<LightMyRequestResponse> {
  const before = await snapshot(gw.store);
  const res = await call();
  // Ids the caller sent may come back in the problem's instance; nothing else of the owner's may.
  expect(res.body).not.toContain(SECRET_NAME);
  expect(res.body).not.toContain(ownerLead.contact);
  for (const id of [ownerLead.id, legacyLeadId]) if (!asked.includes(id)) expect(res.body).not.toContain(id);
  if (res.statusCode >= 400) expect(await snapshot(gw.store)).toBe(before);
  return res;
}

describe("v1 routes with another integration's key", () => {
  it.each([
    ['another workspace', () => keys.otherWorkspaceV1],
    ['another integration of the same workspace', () => keys.sameWorkspaceV1],
  ])("answers about the owner's person from %s: 404, nothing written", async (_name, key) => {
    const res = await foreign('', () =>
      v1Call(key(), '/api/integrations/v1/leads/answers/', {
        event_id: `iso-a-${_name}`,
        external_contact_id: 'telegram:555',
        answers: { goal: 'x' },
      }),
    );
    expect(res.statusCode).toBe(404);
  });

  it("a lead with the owner's external id from another workspace makes a new person, never the owner's", async () => {
    const res = await foreign('', () =>
      v1Call(keys.otherWorkspaceV1, '/api/integrations/v1/leads/', {
        event_id: 'iso-l-1',
        external_contact_id: 'telegram:555',
        first_name: 'Other',
        phone: '+998905550555',
      }),
    );
    expect(res.statusCode).toBe(201);
    expect(res.json().contact_id).not.toBe(ownerLead.contact);
    expect(res.json().matched_existing).toBe(false);
  });
});

describe("legacy routes with another workspace's bot key", () => {
  const id = () => legacyLeadId;
  it.each([
    ['GET', 'leads/{id}/', undefined],
    ['PATCH', 'leads/{id}/', { first_name: 'Hijack', tag_ids: [] }],
    ['PUT', 'leads/{id}/', { first_name: 'Hijack' }],
    ['DELETE', 'leads/{id}/', undefined],
    ['POST', 'leads/{id}/move/', { stage: '00000000-0000-0000-0000-000000000000' }],
    ['GET', 'leads/{id}/comments/', undefined],
    ['POST', 'leads/{id}/comments/', { text: 'hijack' }],
    ['POST', 'leads/{id}/payments/', { amount: 10 }],
  ] as const)("%s %s on the owner's lead: 404, nothing read or written", async (method, path, body) => {
    const url = `/api/bots/api/${path.replace('{id}', id())}`;
    const res = await foreign(url, () => legacyCall(LEGACY.otherWorkspace, method, url, body));
    expect(res.statusCode).toBe(404);
    // The owner still sees the lead whole.
    expect((await legacyCall(LEGACY.owner, 'GET', `/api/bots/api/leads/${id()}/`)).json().first_name).toBe(SECRET_NAME);
  });

  it("lists and catalogues show only the caller's workspace", async () => {
    for (const url of [
      '/api/bots/api/leads/',
      '/api/bots/api/tags/',
      '/api/bots/api/statuses/',
      '/api/bots/api/boards/',
      '/api/bots/api/groups/',
      '/api/bots/api/info/',
    ]) {
      const res = await foreign(url, () => legacyCall(LEGACY.otherWorkspace, 'GET', url));
      expect(res.statusCode, url).toBe(200);
      expect(res.body, url).not.toContain(legacyTagId);
      expect(res.body, url).not.toMatch(/BrightPath|Admissions|Telegram/);
    }
  });
});

describe('admin routes with an integration key', () => {
  it.each([
    ['GET', '/admin/v1/leads?workspace=brightpath'],
    ['GET', '/admin/v1/leads/{id}'],
    ['POST', '/admin/v1/integrations/brightpath:telegram-bot/keys'],
    ['GET', '/admin/v1/integrations/brightpath:telegram-bot/report'],
    ['POST', '/admin/v1/integrations/brightpath:telegram-bot/switch-off'],
  ] as const)("%s %s: 401 with the owner's own v1 key, nothing read or written", async (method, url) => {
    const path = url.replace('{id}', ownerLead.id);
    const res = await foreign(path, () =>
      gw.app.inject({
        method,
        url: path,
        headers: { authorization: `Bearer ${keys.ownerV1}` },
        ...(method === 'POST' ? { payload: {} } : {}),
      }),
    );
    expect(res.statusCode).toBe(401);
  });
});
