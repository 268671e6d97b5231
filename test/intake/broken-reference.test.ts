// A binding whose person is gone from the store (a file edited or copied with its foreign keys off):
// every lead and answers for that person answer a problem that names the broken reference, its log
// line too, and nothing is written; the integration's other persons are written as before.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../helper.js';

const HANDLE = 'brightpath:telegram-bot';
const PERSON = 'telegram:broken-1';

let gw: Gateway;
let key: string;
let contactId: string;
beforeAll(async () => {
  gw = await startGateway();
  key = await gw.issueKey(HANDLE);
  const first = await gw.submit(key, { event_id: 'broken-1', external_contact_id: PERSON, first_name: 'Aziza' });
  expect(first.statusCode).toBe(201);
  contactId = first.json<{ contact_id: string }>().contact_id;
  await gw.inspect.removeContact(contactId);
});
afterAll(async () => {
  await gw.close();
});

const logged = () =>
  readFileSync(join(gw.dir, 'gateway.log'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown> & { msg: string });

const answers = (body: unknown) =>
  gw.app.inject({
    method: 'POST',
    url: '/api/integrations/v1/leads/answers/',
    headers: { authorization: `Bearer ${key}` },
    payload: body as object,
  });

function expectBrokenReference(res: { statusCode: number; json<T>(): T }) {
  expect(res.statusCode).toBe(500);
  const problem = res.json<{ code: string; type: string; detail: string }>();
  expect(problem).toMatchObject({ code: 'broken-reference', type: 'urn:lead-gateway:problem:broken-reference' });
  // The row by its key, the column, and the person it names that the store does not hold.
  for (const part of ['contact_bindings', 'integration_id', PERSON, 'contact_id', contactId, 'contacts'])
    expect(problem.detail).toContain(part);
}

describe('a binding whose person is gone', () => {
  it('finding 6: a lead for that person answers 500 broken-reference naming the binding and the missing person, every time, writing nothing', async () => {
    const before = { contacts: await gw.inspect.contacts.count(), leads: await gw.inspect.leads.count() };
    const from = logged().length;
    for (const _ of [1, 2])
      expectBrokenReference(
        await gw.submit(key, {
          event_id: 'broken-2',
          external_contact_id: PERSON,
          first_name: 'Aziza',
          phone: '+998901234567',
        }),
      );
    expect({ contacts: await gw.inspect.contacts.count(), leads: await gw.inspect.leads.count() }).toEqual(before);
    expect(await gw.inspect.submissions.count({ eventId: 'broken-2' })).toBe(0);
    const lines = logged()
      .slice(from)
      .filter((line) => line.msg === 'broken reference');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({
      level: 50,
      reference: { table: 'contact_bindings', column: 'contact_id', missing: contactId, parent: 'contacts' },
    });
  });

  it('finding 6: answers for that person answer the same problem', async () => {
    expectBrokenReference(
      await answers({ event_id: 'broken-a1', external_contact_id: PERSON, answers: { laptop: 'yes' } }),
    );
  });

  it("the integration's other persons are written as before", async () => {
    const other = await gw.submit(key, {
      event_id: 'broken-3',
      external_contact_id: 'telegram:whole-1',
      first_name: 'Bekzod',
    });
    expect(other.statusCode).toBe(201);
    expect(
      (await answers({ event_id: 'broken-a2', external_contact_id: 'telegram:whole-1', answers: { laptop: 'yes' } }))
        .statusCode,
    ).toBeLessThan(300);
  });
});
