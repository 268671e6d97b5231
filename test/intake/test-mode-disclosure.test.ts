// Finding 1 of the test-mode review: a test key is no look-up of the workspace's persons. A test call
// that finds a person its integration did not submit answers with the live call's status, outcome and
// shape, but shows only what the call itself sent and its integration's rules made; every test call
// that found a live person is recorded (which key, which person, when) for the service team: admin
// API, console, and the CLI (test/cli/test-matches.test.ts); docs/api.md "Test mode".
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../helper.js';
import { addUser, consoleClient } from '../support/console.js';
import { TEST_MATCHES_MAX_PER_KEY } from '../../src/migration/test-matches.js';

let gw: Gateway;
let testKey: { id: string; key: string; prefix: string };
let telegramLive: string;
let websiteLive: string;
let seq = 0;
const uniq = (prefix: string) => `${prefix}-${++seq}-${Math.random().toString(36).slice(2, 8)}`;
const phone = () => `+99895${String(1_000_000 + ++seq * 7919).slice(-7)}`;
const TELEGRAM = 'brightpath:telegram-bot';
const WEBSITE = 'brightpath:website-form';

interface LeadReply {
  contact_id: string;
  lead: {
    id: string;
    first_name: string;
    email: string | null;
    notes: string | null;
    stage: unknown;
    [k: string]: unknown;
  };
  intake_outcome: string;
  matched_by: string | null;
  matched_existing: boolean;
  needs_review: boolean;
}
interface MatchPage {
  items: {
    key_id: string;
    key_prefix: string | null;
    contact_id: string;
    lead_id: string | null;
    own: boolean;
    endpoint: string;
    matched_by: string;
    calls: number;
    last_event_id: string;
  }[];
  rows: number;
  rows_max_per_key: number;
  next: string | null;
}

const matches = async (limit = 50) =>
  (await gw.admin('GET', `/admin/v1/integrations/${TELEGRAM}/test-matches?limit=${limit}`)).json<MatchPage>();

beforeAll(async () => {
  gw = await startGateway({ console: { secureCookies: false } });
  telegramLive = await gw.issueKey(TELEGRAM);
  websiteLive = await gw.issueKey(WEBSITE);
  const res = await gw.admin('POST', `/admin/v1/integrations/${TELEGRAM}/keys/test`);
  expect(res.statusCode).toBe(201);
  testKey = res.json();
});
afterAll(() => gw.close());

/** A person the website form submitted, with data the telegram bot never saw. */
async function websitePerson() {
  const person = {
    first_name: 'Zarina',
    last_name: 'Secretova',
    phone: phone(),
    email: `${uniq('zarina')}@example.com`,
  };
  const res = await gw.submit(websiteLive, {
    event_id: uniq('w'),
    ...person,
    notes: 'PRIVATE: pays in cash, call after 18:00',
    metadata: { utm_campaign: 'secret-campaign' },
  });
  expect(res.statusCode).toBe(201);
  return { ...person, created: res.json<LeadReply>() };
}

describe("finding 1: a test call discloses nothing of another integration's person", () => {
  it('answers the live outcome and shape, with a lead made of the call alone: no name, e-mail, notes, ids or values of the person found', async () => {
    const found = await websitePerson();
    const before = { leads: await gw.inspect.leads.count(), contacts: await gw.inspect.contacts.count() };
    const res = await gw.submit(testKey.key, { event_id: uniq('t'), first_name: 'Guess', phone: found.phone });
    expect(res.statusCode).toBe(200);
    expect(res.headers['lead-gateway-test-mode']).toBe('true');
    const body = res.json<LeadReply>();
    // What a live call would say of the path: the person exists and the inquiry joins its open lead.
    expect(body).toMatchObject({
      intake_outcome: 'attached',
      matched_existing: true,
      matched_by: 'phone',
      needs_review: false,
    });
    // Nothing of the person found: not its ids, name, e-mail, notes or metadata.
    const text = res.body;
    for (const secret of [
      found.created.contact_id,
      found.created.lead.id,
      found.email,
      'Zarina',
      'Secretova',
      'PRIVATE',
      'secret-campaign',
    ])
      expect(text).not.toContain(secret);
    // The lead shown is the telegram bot's own making: what it sent, its defaults.
    expect(body.lead).toMatchObject({ first_name: 'Guess', email: null, notes: null });
    const live = await gw.submit(telegramLive, { event_id: uniq('l'), first_name: 'Own', phone: phone() });
    expect(body.lead.stage).toEqual(live.json<LeadReply>().lead.stage);
    // Nothing kept but the live call above.
    expect(await gw.inspect.leads.count()).toBe(before.leads + 1);
    expect(await gw.inspect.contacts.count()).toBe(before.contacts + 1);
  });

  it('confirms no guessed first name: the right and a wrong name get the same answer', async () => {
    const found = await websitePerson();
    const right = await gw.submit(testKey.key, { event_id: uniq('t'), first_name: 'Zarina', phone: found.phone });
    const wrong = await gw.submit(testKey.key, { event_id: uniq('t'), first_name: 'Wrong', phone: found.phone });
    const shape = (b: LeadReply) => ({
      ...b,
      contact_id: undefined,
      submission_id: undefined,
      lead: { ...b.lead, id: undefined, first_name: undefined, created_at: undefined, updated_at: undefined },
    });
    expect(shape(right.json())).toEqual(shape(wrong.json()));
    expect(wrong.json<LeadReply>().needs_review).toBe(false);
    // The live key, by contrast, flags the differing name (docs/api.md, "Outcomes").
    expect(
      (
        await gw.submit(telegramLive, { event_id: uniq('l'), first_name: 'Wrong', phone: found.phone })
      ).json<LeadReply>().needs_review,
    ).toBe(true);
  });

  it("shows the integration's own lead as the live call does", async () => {
    const own = await gw.submit(telegramLive, {
      event_id: uniq('l'),
      external_contact_id: uniq('telegram'),
      first_name: 'Malika',
      phone: phone(),
      email: `${uniq('m')}@example.com`,
    });
    const ownLead = own.json<LeadReply>();
    const test = await gw.submit(testKey.key, {
      event_id: uniq('t'),
      first_name: 'Malika',
      phone: ownLead.lead.phone as string,
    });
    expect(test.statusCode).toBe(200);
    expect(test.json<LeadReply>()).toMatchObject({
      intake_outcome: 'attached',
      contact_id: ownLead.contact_id,
      lead: { id: ownLead.lead.id, email: ownLead.lead.email },
    });
  });
});

describe('finding 1: every test call that found a live person is attributable', () => {
  it('records which key, which person and when, per key and person, listed by the admin API and the console', async () => {
    const found = await websitePerson();
    const eventIds = [uniq('t'), uniq('t')];
    for (const eventId of eventIds)
      expect(
        (await gw.submit(testKey.key, { event_id: eventId, first_name: 'Guess', email: found.email })).statusCode,
      ).toBe(200);
    // A test call that finds nobody is no look-up of anybody: not recorded.
    const rowsBefore = (await matches(500)).rows;
    expect(
      (await gw.submit(testKey.key, { event_id: uniq('t'), first_name: 'Nobody', phone: phone() })).statusCode,
    ).toBe(201);
    const page = await matches(500);
    expect(page.rows).toBe(rowsBefore);
    const row = page.items.find((e) => e.contact_id === found.created.contact_id);
    expect(row).toEqual({
      key_id: testKey.id,
      key_prefix: testKey.prefix,
      contact_id: found.created.contact_id,
      lead_id: found.created.lead.id,
      own: false,
      endpoint: 'leads',
      matched_by: 'email',
      last_event_id: eventIds[1],
      calls: 2,
      first_at: expect.any(String),
      last_at: expect.any(String),
    });
    expect(page.rows_max_per_key).toBe(TEST_MATCHES_MAX_PER_KEY);

    // The service team's console page lists it; a workspace owner is refused.
    await addUser(gw, 'dilnoza');
    await addUser(gw, 'bright-owner', 'brightpath');
    const team = consoleClient(gw.app, { gw });
    const owner = consoleClient(gw.app, { gw });
    expect((await team.signIn('dilnoza')).statusCode).toBe(303);
    expect((await owner.signIn('bright-owner')).statusCode).toBe(303);
    const html = (await team.get(`/console/integrations/${TELEGRAM}/test-matches`)).body;
    expect(html).toContain(`data-contact-id="${found.created.contact_id}"`);
    expect(html).toContain(testKey.prefix);
    expect((await team.get(`/console/integrations/${TELEGRAM}`)).body).toContain('data-testid="test-matches-link"');
    expect((await owner.get(`/console/integrations/${TELEGRAM}/test-matches`)).statusCode).toBe(403);
  });

  it('records a test answers call, which reaches only persons the integration bound', async () => {
    const externalId = uniq('telegram');
    const created = (
      await gw.submit(telegramLive, {
        event_id: uniq('l'),
        external_contact_id: externalId,
        first_name: 'Dilshod',
        phone: phone(),
      })
    ).json<LeadReply>();
    const res = await gw.app.inject({
      method: 'POST',
      url: '/api/integrations/v1/leads/answers/',
      headers: { authorization: `Bearer ${testKey.key}` },
      payload: { event_id: uniq('t'), external_contact_id: externalId, answers: { goal: 'Frontend job' } },
    });
    expect(res.statusCode).toBe(200);
    const row = (await matches(500)).items.find((e) => e.contact_id === created.contact_id);
    expect(row).toMatchObject({
      own: true,
      endpoint: 'answers',
      matched_by: 'external_contact_id',
      lead_id: created.lead.id,
      calls: 1,
    });
  });

  it('refuses, past its cap of rows, a call with that test key that finds a person not recorded yet, and answers nothing of that person', async () => {
    // The key's rows filled up to the cap directly, as a sweep of the workspace would (every row so far is this key's).
    const { rows } = await matches();
    const at = new Date().toISOString();
    const integrationId = gw.rules.current().findIntegration(TELEGRAM)!.id;
    await gw.store.transact(async (tx) => {
      for (let i = rows; i < TEST_MATCHES_MAX_PER_KEY; i++) {
        await tx.testMatches.record(
          {
            integrationId,
            keyId: testKey.id,
            contactId: `filler-${i}`,
            leadId: null,
            endpoint: 'leads',
            eventId: `filler-${i}`,
            matchedBy: 'phone',
            own: false,
            at,
          },
          TEST_MATCHES_MAX_PER_KEY,
        );
      }
    });
    expect((await matches()).rows).toBe(TEST_MATCHES_MAX_PER_KEY);
    const found = await websitePerson();
    const refused = await gw.submit(testKey.key, { event_id: uniq('t'), first_name: 'Guess', phone: found.phone });
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toMatchObject({ code: 'limit-reached' });
    expect(refused.body).not.toContain(found.created.contact_id);
    expect((await matches()).rows).toBe(TEST_MATCHES_MAX_PER_KEY);
    // A test call that finds nobody, another test key, or a live call, is not held back by it.
    expect(
      (await gw.submit(testKey.key, { event_id: uniq('t'), first_name: 'Nobody', phone: phone() })).statusCode,
    ).toBe(201);
    const other = (await gw.admin('POST', `/admin/v1/integrations/${TELEGRAM}/keys/test`)).json<{ key: string }>().key;
    expect((await gw.submit(other, { event_id: uniq('t'), first_name: 'Guess', phone: found.phone })).statusCode).toBe(
      200,
    );
    expect((await matches()).rows).toBe(TEST_MATCHES_MAX_PER_KEY + 1);
    expect(
      (await gw.submit(telegramLive, { event_id: uniq('l'), first_name: 'Guess', phone: found.phone })).statusCode,
    ).toBe(200);
  });
});

describe('finding 1: a person the integration bound whose latest lead another integration made', () => {
  // A key of its own: the one above has reached its cap.
  let fresh: string;
  beforeAll(async () => {
    fresh = (await gw.admin('POST', `/admin/v1/integrations/${TELEGRAM}/keys/test`)).json<{ key: string }>().key;
  });

  /** A person the telegram bot bound, whose telegram lead was deleted, then a website lead with a goal. */
  async function boundWithForeignLead() {
    const externalId = uniq('telegram');
    const own = (
      await gw.submit(telegramLive, {
        event_id: uniq('l'),
        external_contact_id: externalId,
        first_name: 'Kamola',
        phone: phone(),
      })
    ).json<LeadReply>();
    expect((await gw.admin('DELETE', `/admin/v1/leads/${own.lead.id}`)).statusCode).toBe(204);
    const website = await gw.submit(websiteLive, {
      event_id: uniq('w'),
      first_name: 'Kamola',
      phone: own.lead.phone as string,
      notes: 'PRIVATE website note',
      answers: { goal: 'Secret goal' },
    });
    expect(website.json<LeadReply>().intake_outcome).toBe('created');
    return { externalId, contactId: own.contact_id, websiteLeadId: website.json<LeadReply>().lead.id };
  }

  it('a test answers call confirms no value stored on that lead, nor its id', async () => {
    const p = await boundWithForeignLead();
    const answer = (key: string) =>
      gw.app.inject({
        method: 'POST',
        url: '/api/integrations/v1/leads/answers/',
        headers: { authorization: `Bearer ${key}` },
        payload: { event_id: uniq('a'), external_contact_id: p.externalId, answers: { goal: 'Secret goal' } },
      });
    const test = await answer(fresh);
    expect(test.statusCode).toBe(200);
    expect(test.json()).toMatchObject({
      contact_id: p.contactId,
      answers: { written: ['goal'], unchanged: [], kept_existing: [] },
    });
    expect(test.body).not.toContain(p.websiteLeadId);
    const row = (await matches(500)).items.find((e) => e.contact_id === p.contactId && e.endpoint === 'answers');
    expect(row).toMatchObject({ own: false, lead_id: p.websiteLeadId });
    // The live key, by contrast, is told the same value is there.
    expect((await answer(telegramLive)).json()).toMatchObject({
      lead_id: p.websiteLeadId,
      answers: { unchanged: ['goal'] },
    });
  });

  it("a test lead shows the person's own id but a lead made of the call alone", async () => {
    const p = await boundWithForeignLead();
    const test = await gw.submit(fresh, {
      event_id: uniq('t'),
      external_contact_id: p.externalId,
      first_name: 'Kamola',
    });
    expect(test.statusCode).toBe(200);
    const body = test.json<LeadReply>();
    expect(body).toMatchObject({
      contact_id: p.contactId,
      intake_outcome: 'attached',
      matched_by: 'external_contact_id',
      needs_review: false,
      lead: { notes: null },
    });
    expect(body.lead.id).not.toBe(p.websiteLeadId);
    expect(test.body).not.toContain('PRIVATE');
    expect(test.body).not.toContain('Secret goal');
  });
});

describe('a test call the store cannot run or record', () => {
  it('answers 503 saying nothing was kept, with no word of a replay, and shows no person', async () => {
    const fresh = (await gw.admin('POST', `/admin/v1/integrations/${TELEGRAM}/keys/test`)).json<{ key: string }>().key;
    const found = await websitePerson();
    await gw.inspect.refuseWrites(true);
    try {
      const res = await gw.submit(fresh, { event_id: uniq('t'), first_name: 'Guess', phone: found.phone });
      expect(res.statusCode).toBe(503);
      expect(res.headers['lead-gateway-test-mode']).toBe('true');
      expect(res.json<{ detail: string }>().detail).toBe(
        'The store could not run or record this test call. Nothing was kept; resend it.',
      );
      expect(res.body).not.toContain(found.created.contact_id);
    } finally {
      await gw.inspect.refuseWrites(false);
    }
  });
});
