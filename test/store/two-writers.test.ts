// Two gateways writing one database at once (docs/architecture.md, "Concurrency"): every check-then-write holds as if the
// units had run one after the other. Requests are raced over both gateways, a few rounds each.
import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import { onEachEngineTwice, type TwinGateways } from '../support/twin-gateways.js';
import { COMMENTS_PER_LEAD_MAX } from '../../src/lead/comments.js';
import { LEGACY_TAGS_PER_WORKSPACE_MAX } from '../../src/legacy/service.js';
import { newId } from '../../src/store/ids.js';

/** Concurrent requests per race, and races per test: enough to lose a race without locks, bounded. */
const RACERS = 8;
const ROUNDS = 3;

const TELEGRAM = 'brightpath:telegram-bot';
const WEBSITE = 'brightpath:website-form';

interface Keys {
  [handle: string]: string;
}

async function issueKeys(t: TwinGateways, ...handles: string[]): Promise<Keys> {
  const keys: Keys = {};
  for (const handle of handles) {
    const res = await t.admin(0, 'POST', `/admin/v1/integrations/${handle}/keys`);
    expect(res.statusCode).toBe(201);
    keys[handle] = res.json<{ key: string }>().key;
  }
  return keys;
}

const v1 = (t: TwinGateways, i: number, key: string, path: 'leads/' | 'leads/answers/', body: unknown) =>
  t.send(i, 'POST', `/api/integrations/v1/${path}`, { authorization: `Bearer ${key}` }, body);

const race = <T>(n: number, fn: (i: number) => Promise<T>): Promise<T[]> =>
  Promise.all(Array.from({ length: n }, (_, i) => fn(i)));

const unique = () => randomBytes(4).toString('hex');
/** A phone of nine digits no other round uses. */
const phoneOf = (tag: string) => `+99890${String(parseInt(tag, 16) % 10_000_000).padStart(7, '0')}`;

async function integrationId(t: TwinGateways, handle: string): Promise<string> {
  const res = await t.admin(0, 'GET', '/admin/v1/integrations');
  const found = res.json<{ items: { handle: string; id: string }[] }>().items.find((i) => i.handle === handle);
  return found!.id;
}

onEachEngineTwice((_engine, twins) => {
  it('the same new person submitted at once by its binding, phone or e-mail: one contact, one lead, every binding kept', async () => {
    const t = twins();
    if (!t) return;
    const keys = await issueKeys(t, TELEGRAM, WEBSITE);
    const [telegramId, websiteId] = [await integrationId(t, TELEGRAM), await integrationId(t, WEBSITE)];
    for (let round = 0; round < ROUNDS; round++) {
      const tag = unique();
      const variants = [
        // One integration, one external_contact_id, no phone or e-mail to find the person by.
        (i: number) => ({
          handle: TELEGRAM,
          body: { event_id: `bind-${tag}-${i}`, external_contact_id: `tg:${tag}`, first_name: `Bind${tag}` },
        }),
        // The same phone through both integrations, each with its own external_contact_id.
        (i: number) => ({
          handle: i % 2 ? WEBSITE : TELEGRAM,
          body: {
            event_id: `phone-${tag}-${i}`,
            external_contact_id: `ext:${tag}:${i % 2}`,
            first_name: `Phone${tag}`,
            phone: phoneOf(tag),
          },
        }),
        // The same e-mail in two spellings through both integrations.
        (i: number) => ({
          handle: i % 2 ? WEBSITE : TELEGRAM,
          body: {
            event_id: `mail-${tag}-${i}`,
            first_name: `Mail${tag}`,
            email: i % 2 ? `Mail.${tag}@Example.com` : `mail.${tag}@example.com`,
          },
        }),
      ];
      for (const variant of variants) {
        const replies = await race(RACERS, (i) => {
          const { handle, body } = variant(i);
          return v1(t, i, keys[handle]!, 'leads/', body);
        });
        const statuses = replies.map((r) => r.statusCode).sort();
        expect(statuses, replies.map((r) => r.body).join('\n')).toEqual([200, 200, 200, 200, 200, 200, 200, 201]);
        const bodies = replies.map((r) => r.json<{ contact_id: string; lead: { id: string } }>());
        expect(new Set(bodies.map((b) => b.contact_id)).size).toBe(1);
        expect(new Set(bodies.map((b) => b.lead.id)).size).toBe(1);
        const contactId = bodies[0]!.contact_id;
        expect(await t.inspect.leads.count({ contactId })).toBe(1);
        expect(await t.inspect.contacts.count({ firstName: variant(0).body.first_name })).toBe(1);
      }
      // Every binding made, none lost: each points at the one person.
      await t.stores[1].snapshot(async (r) => {
        expect((await r.contacts.findByBinding(telegramId, `tg:${tag}`))?.firstName).toBe(`Bind${tag}`);
        const bound = (await r.contacts.findByBinding(telegramId, `ext:${tag}:0`))!;
        const phoneContact = (
          await r.contacts.match(bound.workspaceId, telegramId, { externalId: null, phone: phoneOf(tag), email: null })
        )?.contact;
        expect(bound.id).toBe(phoneContact!.id);
        expect((await r.contacts.findByBinding(websiteId, `ext:${tag}:1`))?.id).toBe(phoneContact!.id);
      });
    }
  }, 60_000);

  it('one event sent at once through both gateways: one lead and one record, the losers answered as its replay', async () => {
    const t = twins();
    if (!t) return;
    const keys = await issueKeys(t, TELEGRAM);
    for (let round = 0; round < ROUNDS; round++) {
      const tag = unique();
      // Every racer misses the event at its first look and does the work; all but one then find the
      // event recorded when they record it (the ledger's uniqueness), are rolled back and replay it.
      const body = {
        event_id: `once-${tag}`,
        external_contact_id: `tg:${tag}`,
        first_name: 'Once',
        phone: phoneOf(tag),
        answers: { goal: 'job', laptop: 'yes' },
      };
      const replies = await race(RACERS, (i) => v1(t, i, keys[TELEGRAM]!, 'leads/', body));
      expect(replies.map((r) => r.statusCode).sort(), replies.map((r) => r.body).join('\n')).toEqual([
        ...Array(RACERS - 1).fill(200),
        201,
      ]);
      const bodies = replies.map((r) => r.json<{ replayed: boolean; intake_outcome: string; lead: { id: string } }>());
      expect(bodies.filter((b) => !b.replayed)).toHaveLength(1);
      expect(new Set(bodies.map((b) => `${b.intake_outcome} ${b.lead.id}`)).size).toBe(1);
      expect(await t.inspect.leads.count({ id: bodies[0]!.lead.id })).toBe(1);
      expect(await t.inspect.contacts.count({ firstName: 'Once', phone: phoneOf(tag) })).toBe(1);
      expect(await t.inspect.submissions.count({ eventId: `once-${tag}` })).toBe(1);
      expect(await t.inspect.answers.count({ leadId: bodies[0]!.lead.id })).toBe(2);

      const answers = { event_id: `once-${tag}-answers`, external_contact_id: `tg:${tag}`, answers: { age: 30 } };
      const answered = await race(RACERS, (i) => v1(t, i, keys[TELEGRAM]!, 'leads/answers/', answers));
      expect(answered.map((r) => r.statusCode)).toEqual(Array(RACERS).fill(200));
      expect(answered.filter((r) => !r.json<{ replayed: boolean }>().replayed)).toHaveLength(1);
      expect(await t.inspect.answers.count({ leadId: bodies[0]!.lead.id })).toBe(3);
    }
  }, 60_000);

  it('two integrations answering one field at once: the first writer keeps it, the others are told kept_existing', async () => {
    const t = twins();
    if (!t) return;
    const keys = await issueKeys(t, TELEGRAM, WEBSITE);
    for (let round = 0; round < ROUNDS; round++) {
      const tag = unique();
      // One person, known to both integrations (the website's submission attaches and binds).
      expect(
        (
          await v1(t, 0, keys[TELEGRAM]!, 'leads/', {
            event_id: `fw-${tag}-a`,
            external_contact_id: `tg:${tag}`,
            first_name: 'Field',
            phone: phoneOf(tag),
          })
        ).statusCode,
      ).toBe(201);
      expect(
        (
          await v1(t, 1, keys[WEBSITE]!, 'leads/', {
            event_id: `fw-${tag}-b`,
            external_contact_id: `web:${tag}`,
            first_name: 'Field',
            phone: phoneOf(tag),
          })
        ).statusCode,
      ).toBe(200);
      // `laptop` is keep_existing for both: Present from the bot, Absent from the form.
      const replies = await race(RACERS, (i) =>
        i % 2
          ? v1(t, i, keys[WEBSITE]!, 'leads/answers/', {
              event_id: `fw-${tag}-${i}`,
              external_contact_id: `web:${tag}`,
              answers: { laptop: '0' },
            })
          : v1(t, i, keys[TELEGRAM]!, 'leads/answers/', {
              event_id: `fw-${tag}-${i}`,
              external_contact_id: `tg:${tag}`,
              answers: { laptop: 'yes' },
            }),
      );
      expect(replies.map((r) => r.statusCode)).toEqual(Array(RACERS).fill(200));
      const outcomes = replies.map((r, i) => ({
        writer: i % 2,
        answers: r.json<{ answers: Record<string, string[]> }>().answers,
      }));
      const written = outcomes.filter((o) => o.answers.written!.includes('laptop'));
      expect(written).toHaveLength(1);
      const winner = written[0]!.writer;
      // As if one after the other: the winner's own later answers find their value, the other's find the winner's.
      for (const o of outcomes.filter((x) => x !== written[0])) {
        expect(o.answers[o.writer === winner ? 'unchanged' : 'kept_existing'], JSON.stringify(outcomes)).toEqual([
          'laptop',
        ]);
      }
      const leadId = replies[0]!.json<{ lead_id: string }>().lead_id;
      const [stored] = await t.inspect.fieldValues.list({ leadId }, ['writtenByRef']);
      expect(stored!.writtenByRef).toBe(await integrationId(t, winner ? WEBSITE : TELEGRAM));
    }
  }, 60_000);

  it('a known person submitted at once by phone and by e-mail: every inquiry joins one lead, none of its metadata lost', async () => {
    const t = twins();
    if (!t) return;
    const keys = await issueKeys(t, TELEGRAM, WEBSITE);
    for (let round = 0; round < ROUNDS; round++) {
      const tag = unique();
      const [phone, email] = [phoneOf(tag), `known.${tag}@example.com`];
      const first = await v1(t, 0, keys[TELEGRAM]!, 'leads/', {
        event_id: `known-${tag}`,
        first_name: 'Known',
        phone,
        email,
      });
      expect(first.statusCode).toBe(201);
      const leadId = first.json<{ lead: { id: string } }>().lead.id;
      // Found by one key here and by the other there: only the person's own row brings them together.
      const replies = await race(RACERS, (i) =>
        v1(t, i, keys[i % 2 ? WEBSITE : TELEGRAM]!, 'leads/', {
          event_id: `known-${tag}-${i}`,
          first_name: 'Known',
          ...(i % 2 ? { email } : { phone }),
          metadata: { [`inquiry_${i}`]: i },
        }),
      );
      expect(replies.map((r) => r.statusCode)).toEqual(Array(RACERS).fill(200));
      expect(new Set(replies.map((r) => r.json<{ lead: { id: string } }>().lead.id))).toEqual(new Set([leadId]));
      const [lead] = await t.inspect.leads.list({ id: leadId }, ['extraData']);
      expect(Object.keys(lead!.extraData as object).sort()).toEqual(
        Array.from({ length: RACERS }, (_, i) => `inquiry_${i}`).sort(),
      );

      // The person's lead deleted: the first inquiry creates the next lead, the others join it.
      expect((await t.admin(1, 'DELETE', `/admin/v1/leads/${leadId}`)).statusCode).toBe(204);
      const again = await race(RACERS, (i) =>
        v1(t, i, keys[i % 2 ? WEBSITE : TELEGRAM]!, 'leads/', {
          event_id: `known-${tag}-again-${i}`,
          first_name: 'Known',
          ...(i % 2 ? { email } : { phone }),
        }),
      );
      expect(again.map((r) => r.statusCode).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 201]);
      expect(
        await t.inspect.leads.count({ contactId: first.json<{ contact_id: string }>().contact_id, deletedAt: null }),
      ).toBe(1);
    }
  }, 60_000);

  it("an employee and an integration writing one field at once: the employee's value stands, whoever came first", async () => {
    const t = twins();
    if (!t) return;
    const keys = await issueKeys(t, TELEGRAM);
    for (let round = 0; round < ROUNDS; round++) {
      const tag = unique();
      const created = await v1(t, 0, keys[TELEGRAM]!, 'leads/', {
        event_id: `emp-${tag}`,
        external_contact_id: `tg:emp:${tag}`,
        first_name: 'Edited',
      });
      const leadId = created.json<{ lead: { id: string } }>().lead.id;
      // An employee's edit overwrites an integration's value; an integration's answer keeps an employee's.
      const replies = await race(RACERS, (i) =>
        i % 2
          ? t.admin(i, 'PUT', `/admin/v1/leads/${leadId}/fields/laptop`, {
              value: 'Absent',
              written_by: { kind: 'employee', ref: 'dilnoza' },
            })
          : v1(t, i, keys[TELEGRAM]!, 'leads/answers/', {
              event_id: `emp-${tag}-${i}`,
              external_contact_id: `tg:emp:${tag}`,
              answers: { laptop: 'yes' },
            }),
      );
      expect(replies.map((r) => r.statusCode)).toEqual(Array(RACERS).fill(200));
      expect(await t.inspect.fieldValues.list({ leadId }, ['writtenByKind', 'writtenByRef'])).toEqual([
        { writtenByKind: 'employee', writtenByRef: 'dilnoza' },
      ]);
    }
  }, 60_000);

  it('the same migration move made at once on two gateways: one succeeds, the others are refused, one audit row', async () => {
    const t = twins();
    if (!t) return;
    const handle = 'smile-dental:booking-form';
    expect((await t.admin(0, 'POST', `/admin/v1/integrations/${handle}/keys`)).statusCode).toBe(201);
    for (let round = 0; round < ROUNDS; round++) {
      const off = await race(RACERS / 2, (i) =>
        t.admin(i, 'POST', `/admin/v1/integrations/${handle}/switch-off`, { reason: `round ${round}`, force: true }),
      );
      expect(off.map((r) => r.statusCode).sort(), off.map((r) => r.body).join('\n')).toEqual([200, 409, 409, 409]);
      const back = await race(RACERS / 2, (i) =>
        t.admin(i, 'POST', `/admin/v1/integrations/${handle}/rollback`, { reason: `round ${round}` }),
      );
      expect(back.map((r) => r.statusCode).sort()).toEqual([200, 409, 409, 409]);
    }
    const audit = (await t.admin(1, 'GET', `/admin/v1/integrations/${handle}/audit`)).json<{
      items: { action: string; from_state: string; to_state: string }[];
    }>().items;
    expect(audit.filter((a) => a.action === 'switched_off_forced').map((a) => [a.from_state, a.to_state])).toEqual(
      Array(ROUNDS).fill(['migrating', 'switched_off']),
    );
    expect(audit.filter((a) => a.action === 'rolled_back').map((a) => [a.from_state, a.to_state])).toEqual(
      Array(ROUNDS).fill(['switched_off', 'migrating']),
    );
  }, 60_000);

  it('one legacy key imported at once on two gateways: one 201, the others the 409 a second import gets', async () => {
    const t = twins();
    if (!t) return;
    for (let round = 0; round < ROUNDS; round++) {
      const key = `racing-legacy-key-${unique()}-0123456789abcdef`;
      const replies = await race(RACERS / 2, (i) =>
        t.admin(i, 'POST', `/admin/v1/integrations/${i % 2 ? WEBSITE : TELEGRAM}/keys/import`, { key }),
      );
      expect(replies.map((r) => r.statusCode).sort(), replies.map((r) => r.body).join('\n')).toEqual([
        201, 409, 409, 409,
      ]);
      const sequential = await t.admin(0, 'POST', `/admin/v1/integrations/${TELEGRAM}/keys/import`, { key });
      for (const refused of replies.filter((r) => r.statusCode === 409))
        expect(refused.json().type).toBe(sequential.json().type);
    }
    const audit = (await t.admin(0, 'GET', '/admin/v1/audit')).json<{ items: { action: string }[] }>().items;
    expect(audit.filter((a) => a.action === 'legacy_key_imported')).toHaveLength(ROUNDS);
  }, 60_000);

  it('a bot deleting its lead on two gateways at once: one 204, the others 404 as for a deleted lead', async () => {
    const t = twins();
    if (!t) return;
    const botKey = `ownership-legacy-key-${unique()}-0123456789`;
    expect(
      (await t.admin(0, 'POST', `/admin/v1/integrations/${TELEGRAM}/keys/import`, { key: botKey })).statusCode,
    ).toBe(201);
    const bot = (i: number, method: 'POST' | 'DELETE', url: string, body?: unknown) =>
      t.send(i, method, `/api/bots/api/${url}`, { 'x-bot-api-key': botKey }, body);
    for (let round = 0; round < ROUNDS; round++) {
      const tag = unique();
      const created = await bot(0, 'POST', 'leads/', {
        first_name: 'Owned',
        phone: phoneOf(tag),
        extra_data: { telegram_id: tag },
      });
      expect(created.statusCode).toBe(201);
      const leadId = created.json<{ id: string }>().id;
      const replies = await race(RACERS / 2, (i) => bot(i, 'DELETE', `leads/${leadId}/`));
      expect(replies.map((r) => r.statusCode).sort(), replies.map((r) => r.body).join('\n')).toEqual([
        204, 404, 404, 404,
      ]);
    }
  }, 60_000);

  it('comments and created tags raced at their caps on two gateways: each cap holds exactly, the rest are 409s', async () => {
    const t = twins();
    if (!t) return;
    const botKey = `capped-legacy-key-${unique()}-0123456789`;
    expect(
      (await t.admin(0, 'POST', `/admin/v1/integrations/${TELEGRAM}/keys/import`, { key: botKey })).statusCode,
    ).toBe(201);
    const bot = (i: number, url: string, body: unknown) =>
      t.send(i, 'POST', `/api/bots/api/${url}`, { 'x-bot-api-key': botKey }, body);
    const at = new Date().toISOString();
    const expected = [...Array<number>(3).fill(201), ...Array<number>(RACERS - 3).fill(409)];
    for (let round = 0; round < ROUNDS; round++) {
      const tag = unique();
      const leadId = (await bot(0, 'leads/', { first_name: 'Capped', phone: phoneOf(tag) })).json<{ id: string }>().id;
      // Three comments short of the cap, written straight into the store.
      await t.stores[0].transact(async (tx) => {
        for (let n = 0; n < COMMENTS_PER_LEAD_MAX - 3; n++)
          await tx.leads.addComment({
            id: newId(),
            leadId,
            body: `c${n}`,
            authorKind: 'integration',
            authorRef: null,
            createdAt: at,
          });
      });
      const replies = await race(RACERS, (i) => bot(i, `leads/${leadId}/comments/`, { text: `raced ${i}` }));
      expect(replies.map((r) => r.statusCode).sort(), replies.map((r) => r.body).join('\n')).toEqual(expected);
      expect(await t.stores[1].snapshot((r) => r.leads.commentsCount(leadId))).toBe(COMMENTS_PER_LEAD_MAX);
    }
    // Tags: one workspace, so one race, three short of the cap.
    const workspaceId = (await t.send(0, 'GET', '/api/bots/api/info/', { 'x-bot-api-key': botKey })).json<{
      workspace: { id: string };
    }>().workspace.id;
    await t.stores[0].transact(async (tx) => {
      for (let n = 0; n < LEGACY_TAGS_PER_WORKSPACE_MAX - 3; n++)
        await tx.legacyTags.ensure({ workspaceId, id: newId(), name: `filler ${n}`, color: null, createdAt: at });
    });
    const replies = await race(RACERS, (i) => bot(i, 'tags/create/', { name: `raced tag ${i}` }));
    expect(replies.map((r) => r.statusCode).sort(), replies.map((r) => r.body).join('\n')).toEqual(expected);
    expect(await t.stores[1].snapshot((r) => r.legacyTags.count(workspaceId))).toBe(LEGACY_TAGS_PER_WORKSPACE_MAX);
  }, 60_000);
});
