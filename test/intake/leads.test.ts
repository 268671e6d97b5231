// POST /api/integrations/v1/leads/: the outcome table of docs/api.md, idempotency, matching and the lead object.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../helper.js';
import { stableId } from '../../src/rules/ids.js';
import { EXTRA_DATA_MAX_BYTES } from '../../src/intake/service.js';

let gw: Gateway;
let key: string;
let seq = 0;
const uniq = (prefix: string) => `${prefix}-${++seq}-${Math.random().toString(36).slice(2, 8)}`;
/** A distinct valid phone per call, so tests do not match each other's persons. */
const phone = () => `+99890${String(1_000_000 + ++seq * 7919).slice(-7)}`;

beforeAll(async () => {
  gw = await startGateway();
  key = await gw.issueKey('brightpath:telegram-bot');
});
afterAll(() => gw.close());

const ids = {
  newInquiry: stableId('brightpath', 'stage', 'Admissions', 'New inquiry'),
  contacted: stableId('brightpath', 'stage', 'Admissions', 'Contacted'),
  cold: stableId('brightpath', 'status', 'Cold'),
  dilnoza: stableId('brightpath', 'user', 'dilnoza'),
  jasur: stableId('brightpath', 'user', 'jasur'),
  telegramTag: stableId('brightpath', 'tag', 'Telegram'),
};

describe('intake outcome table (docs/api.md, Outcomes)', () => {
  it('creates a lead for a new person: 201, replayed false, matched_existing false', async () => {
    const res = await gw.submit(key, {
      event_id: uniq('e'),
      external_contact_id: uniq('tg'),
      first_name: 'Aziza',
      phone: phone(),
    });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({
      replayed: false,
      matched_existing: false,
      deleted: false,
      intake_outcome: 'created',
      reactivated: false,
      needs_review: false,
    });
    expect(await gw.inspect.leads.count({ id: body.lead.id })).toBe(1);
    expect(await gw.inspect.submissions.count({ id: body.submission_id })).toBe(1);
  });

  it('attaches an inquiry of a known person to their lead: 200, matched_existing true', async () => {
    const ext = uniq('tg');
    const first = await gw.submit(key, { event_id: uniq('e'), external_contact_id: ext, first_name: 'Bekzod' });
    const second = await gw.submit(key, {
      event_id: uniq('e'),
      external_contact_id: ext,
      first_name: 'Bekzod',
      notes: 'Asked about evening groups',
    });
    expect(second.statusCode).toBe(200);
    expect(second.json()).toMatchObject({
      matched_existing: true,
      matched_by: 'external_contact_id',
      intake_outcome: 'attached',
      replayed: false,
    });
    expect(second.json().lead.id).toBe(first.json().lead.id);
    expect(second.json().lead.comments_count).toBe(1);
    expect(second.json().contact_id).toBe(first.json().contact_id);
    expect(await gw.inspect.leads.count({ contactId: first.json().contact_id })).toBe(1);
  });

  it('answers a repeat with the same event_id and data as a replay: 200, no second lead', async () => {
    const body = { event_id: uniq('e'), external_contact_id: uniq('tg'), first_name: 'Dildora', phone: phone() };
    const first = await gw.submit(key, body);
    const again = await gw.submit(key, {
      phone: body.phone,
      first_name: 'Dildora',
      external_contact_id: body.external_contact_id,
      event_id: body.event_id,
    });
    expect(again.statusCode).toBe(200);
    const replay = again.json();
    expect(replay.replayed).toBe(true);
    expect(replay.lead.id).toBe(first.json().lead.id);
    expect(replay.submission_id).toBe(first.json().submission_id);
    expect(replay.intake_outcome).toBe('created');
    expect(await gw.inspect.leads.count({ contactId: replay.contact_id })).toBe(1);
    expect(await gw.inspect.submissions.count({ eventId: body.event_id })).toBe(1);
  });

  it('replays a lead with several field values, a tag and its counts as the first answer gave it, once per field value', async () => {
    const body = {
      event_id: uniq('e'),
      external_contact_id: uniq('tg'),
      first_name: 'Nodira',
      phone: phone(),
      metadata: { source_key: 'ig_spring' },
      answers: { course: 'python', age: 27 },
    };
    const first = await gw.submit(key, body);
    expect(first.statusCode).toBe(201);
    const lead = first.json().lead;
    expect(lead.custom_field_values).toHaveLength(2);
    expect(lead.tags.length).toBeGreaterThan(0);
    expect(lead.status_detail.leads_count).toBeGreaterThan(0);
    const again = await gw.submit(key, body);
    expect(again.statusCode).toBe(200);
    expect(again.json().replayed).toBe(true);
    expect(again.json().lead).toEqual(lead);
  });

  it('refuses the same event_id with different data: 409 naming the differing paths, never values', async () => {
    const eventId = uniq('e');
    await gw.submit(key, {
      event_id: eventId,
      first_name: 'Eldor',
      phone: phone(),
      metadata: { source_key: 'ig_spring' },
    });
    const res = await gw.submit(key, {
      event_id: eventId,
      first_name: 'Eldorbek',
      phone: phone(),
      metadata: { source_key: 'ig_spring' },
    });
    expect(res.statusCode).toBe(409);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    const problem = res.json();
    expect(problem.paths).toEqual(['/first_name', '/phone']);
    expect(problem.detail).not.toContain('Eldorbek');
    expect(await gw.inspect.submissions.count({ eventId })).toBe(1);
  });
});

describe('a new lead in its first reply', () => {
  // The unit that creates a lead answers from what it wrote (the values, the default tags, no payment or
  // comment) and reads only the counts: the reply must be the lead exactly as the store reads it back.
  it('is the lead as read back: every field type, the default tags, the status and group counts', async () => {
    const formKey = await gw.issueKey('brightpath:website-form');
    const cases = [
      {
        key,
        body: {
          event_id: uniq('e'),
          external_contact_id: uniq('tg'),
          first_name: 'Zarina',
          phone: phone(),
          notes: 'asked about evening groups',
          metadata: { source_key: 'ig_spring', utm: { campaign: 'spring' } },
          answers: {
            goal: 'Frontend job',
            age: '19',
            video_watched: 'ha',
            laptop: 'ha',
            trial_date: '2026-12-05',
            call_back_at: '2026-12-01T10:00:00+05:00',
            course: 'python',
            days: 'mon,fri',
            unmapped_key: 'x',
          },
        },
      },
      {
        key: formKey,
        body: {
          event_id: uniq('e'),
          first_name: 'Timur',
          email: `${uniq('t')}@example.com`,
          answers: { laptop: '1', goal: 'data' },
        },
      },
      { key, body: { event_id: uniq('e'), external_contact_id: uniq('tg'), first_name: 'Akmal' } },
    ];
    for (const { key: k, body } of cases) {
      const first = await gw.submit(k, body);
      expect(first.statusCode).toBe(201);
      const replay = (await gw.submit(k, body)).json();
      expect(replay.replayed).toBe(true);
      expect(first.json().lead).toStrictEqual(replay.lead);
    }
    const form = (await gw.submit(formKey, cases[1]!.body)).json().lead;
    expect(form.group_detail.leads_count).toBeGreaterThan(0);
    expect(form.status_detail.leads_count).toBeGreaterThan(0);
    expect(form.custom_field_values).toHaveLength(2);
  });
});

describe('replay shows the lead as it is now', () => {
  it('shows a stage moved by an operator', async () => {
    const body = { event_id: uniq('e'), external_contact_id: uniq('tg'), first_name: 'Farrux' };
    const first = (await gw.submit(key, body)).json();
    expect(first.lead.stage).toBe(ids.newInquiry);
    const moved = await gw.admin('POST', `/admin/v1/leads/${first.lead.id}/move`, { stage: ids.contacted });
    expect(moved.statusCode).toBe(200);
    const replay = (await gw.submit(key, body)).json();
    expect(replay).toMatchObject({ replayed: true, deleted: false, intake_outcome: 'created' });
    expect(replay.lead.stage).toBe(ids.contacted);
  });

  it('shows lead null and deleted true after a deletion', async () => {
    const body = { event_id: uniq('e'), external_contact_id: uniq('tg'), first_name: 'Gulnora' };
    const first = (await gw.submit(key, body)).json();
    expect((await gw.admin('DELETE', `/admin/v1/leads/${first.lead.id}`)).statusCode).toBe(204);
    const res = await gw.submit(key, body);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      lead: null,
      deleted: true,
      replayed: true,
      contact_id: first.contact_id,
      submission_id: first.submission_id,
    });
  });

  it('creates a new lead when the person has only a deleted one', async () => {
    const ext = uniq('tg');
    const first = (await gw.submit(key, { event_id: uniq('e'), external_contact_id: ext, first_name: 'Hasan' })).json();
    await gw.admin('DELETE', `/admin/v1/leads/${first.lead.id}`);
    const res = await gw.submit(key, { event_id: uniq('e'), external_contact_id: ext, first_name: 'Hasan' });
    expect(res.statusCode).toBe(201);
    expect(res.json().lead.id).not.toBe(first.lead.id);
    expect(res.json().contact_id).toBe(first.contact_id);
  });
});

describe('reactivation', () => {
  it('reopens a closed lead into the integration stage: 200, reactivated true', async () => {
    const ext = uniq('tg');
    const first = (await gw.submit(key, { event_id: uniq('e'), external_contact_id: ext, first_name: 'Ilhom' })).json();
    await gw.admin('POST', `/admin/v1/leads/${first.lead.id}/move`, { stage: ids.contacted });
    const closed = await gw.admin('POST', `/admin/v1/leads/${first.lead.id}/close`, {
      outcome: 'lost',
      reason: 'No answer',
      closed_by: 'jasur',
    });
    expect(closed.json()).toMatchObject({ close_outcome: 'lost', closed_by: ids.jasur });
    const res = await gw.submit(key, { event_id: uniq('e'), external_contact_id: ext, first_name: 'Ilhom' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ intake_outcome: 'reactivated', reactivated: true, matched_existing: true });
    expect(res.json().lead).toMatchObject({
      id: first.lead.id,
      stage: ids.newInquiry,
      closed_at: null,
      closed_by: null,
      close_outcome: null,
    });
  });
});

describe('request validation', () => {
  it('a failed request consumes nothing: 422 then the same event_id succeeds with 201', async () => {
    const eventId = uniq('e');
    const bad = await gw.submit(key, { event_id: eventId, phone: phone() });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().errors).toEqual([{ path: '/first_name', message: expect.any(String) }]);
    const good = await gw.submit(key, { event_id: eventId, first_name: 'Jamshid', phone: phone() });
    expect(good.statusCode).toBe(201);
  });

  it.each(['stage', 'assigned_to', 'tags', 'tag_ids', 'source', 'status'])(
    'refuses %s, saying it comes from the integration settings',
    async (field) => {
      const before = await gw.inspect.leads.count();
      const res = await gw.submit(key, { event_id: uniq('e'), first_name: 'Kamola', [field]: 'x' });
      expect(res.statusCode).toBe(422);
      expect(res.json().errors).toEqual([
        { path: `/${field}`, message: expect.stringContaining('integration settings') },
      ]);
      expect(await gw.inspect.leads.count()).toBe(before);
    },
  );

  it('names each unknown field and each wrong type at once', async () => {
    const res = await gw.submit(key, { event_id: 7, first_name: 'Laylo', colour: 'red', email: 'not-an-email' });
    expect(res.statusCode).toBe(422);
    expect(
      res
        .json()
        .errors.map((e: { path: string }) => e.path)
        .sort(),
    ).toEqual(['/colour', '/email', '/event_id']);
  });

  it('accepts metadata of 16 KB and refuses one byte more', async () => {
    const pad = (n: number) => ({ blob: 'x'.repeat(n - '{"blob":""}'.length) });
    expect(
      (await gw.submit(key, { event_id: uniq('e'), first_name: 'Madina', metadata: pad(16_384) })).statusCode,
    ).toBe(201);
    const res = await gw.submit(key, { event_id: uniq('e'), first_name: 'Madina', metadata: pad(16_385) });
    expect(res.statusCode).toBe(422);
    expect(res.json().errors[0]).toMatchObject({ path: '/metadata', message: expect.stringContaining('16384 bytes') });
  });

  it('refuses an event_id longer than 255 characters and an empty first name', async () => {
    const res = await gw.submit(key, { event_id: 'e'.repeat(256), first_name: '  ' });
    expect(res.statusCode).toBe(422);
    expect(
      res
        .json()
        .errors.map((e: { path: string }) => e.path)
        .sort(),
    ).toEqual(['/event_id', '/first_name']);
  });
});

describe('phone normalisation and person matching', () => {
  it('treats the four phone forms as one person', async () => {
    const forms = ['+998901234567', '998901234567', '901234567', '90 123-45-67'];
    const replies = [];
    for (const form of forms)
      replies.push((await gw.submit(key, { event_id: uniq('e'), first_name: 'Nodira', phone: form })).json());
    expect(new Set(replies.map((r) => r.contact_id)).size).toBe(1);
    expect(new Set(replies.map((r) => r.lead.id)).size).toBe(1);
    expect(replies[0].lead.phone).toBe('+998901234567');
    expect(replies.slice(1).every((r) => r.matched_by === 'phone' && r.intake_outcome === 'attached')).toBe(true);
  });

  it('refuses a phone of fewer than 9 digits', async () => {
    const res = await gw.submit(key, { event_id: uniq('e'), first_name: 'Otabek', phone: '12345' });
    expect(res.statusCode).toBe(422);
    expect(res.json().errors[0].path).toBe('/phone');
  });

  it('matches by e-mail case-insensitively and binds the external_contact_id to that person', async () => {
    const email = `${uniq('p')}@Example.com`;
    const first = (await gw.submit(key, { event_id: uniq('e'), first_name: 'Parizoda', email })).json();
    const ext = uniq('tg');
    const second = (
      await gw.submit(key, {
        event_id: uniq('e'),
        first_name: 'Parizoda',
        email: email.toUpperCase(),
        external_contact_id: ext,
      })
    ).json();
    expect(second).toMatchObject({ matched_by: 'email', contact_id: first.contact_id });
    const third = (
      await gw.submit(key, { event_id: uniq('e'), first_name: 'Parizoda', external_contact_id: ext })
    ).json();
    expect(third).toMatchObject({ matched_by: 'external_contact_id', contact_id: first.contact_id });
  });

  it('fills empty lead fields on attach and keeps filled ones', async () => {
    const ext = uniq('tg');
    const p = phone();
    await gw.submit(key, { event_id: uniq('e'), external_contact_id: ext, first_name: 'Rustam', phone: p });
    const res = (
      await gw.submit(key, {
        event_id: uniq('e'),
        external_contact_id: ext,
        first_name: 'Rustam',
        last_name: 'Aliyev',
        email: 'r@example.com',
      })
    ).json();
    expect(res.lead).toMatchObject({ last_name: 'Aliyev', email: 'r@example.com', phone: p });
  });

  it('flags needs_review when matched by phone with another first name, and lists it for operators', async () => {
    const p = phone();
    await gw.submit(key, { event_id: uniq('e'), first_name: 'Sardor', phone: p });
    const res = (await gw.submit(key, { event_id: uniq('e'), first_name: 'Shahlo', phone: p })).json();
    expect(res).toMatchObject({ needs_review: true, matched_by: 'phone', intake_outcome: 'attached' });
    const review = (await gw.admin('GET', '/admin/v1/integrations/brightpath:telegram-bot/review')).json();
    expect(review.items.find((i: { submission_id: string }) => i.submission_id === res.submission_id).reason).toContain(
      '"Shahlo"',
    );
  });

  it('flags needs_review when the binding points at a person with another phone', async () => {
    const ext = uniq('tg');
    await gw.submit(key, { event_id: uniq('e'), external_contact_id: ext, first_name: 'Temur', phone: phone() });
    const res = (
      await gw.submit(key, { event_id: uniq('e'), external_contact_id: ext, first_name: 'Temur', phone: phone() })
    ).json();
    expect(res).toMatchObject({ needs_review: true, matched_by: 'external_contact_id' });
  });
});

describe('integration settings decide stage, status, owner, tags and source', () => {
  it('applies the lead defaults and the full lead object of docs/api.md', async () => {
    const lead = (
      await gw.submit(key, { event_id: uniq('e'), first_name: 'Umida', notes: 'Wants a trial lesson' })
    ).json().lead;
    expect(lead).toMatchObject({
      stage: ids.newInquiry,
      status: ids.cold,
      assigned_to: ids.dilnoza,
      tag_ids: [ids.telegramTag],
      notes: 'Wants a trial lesson',
      assigned_to_detail: { id: ids.dilnoza, username: 'dilnoza', first_name: 'Dilnoza', last_name: 'Karimova' },
      status_detail: { id: ids.cold, name: 'Cold', is_default: true, leads_count: expect.any(Number) },
      tags: [{ id: ids.telegramTag, name: 'Telegram', is_active: true, archived_at: null }],
      custom_field_values: [],
    });
    for (const member of [
      'location',
      'position',
      'region_code',
      'country_code',
      'currency',
      'gender',
      'team',
      'closed_by_detail',
      'age',
      'value',
      'salary',
      'next_date',
      'active_task_status',
    ]) {
      expect(lead).toHaveProperty(member, null);
    }
  });

  it('turns an exact source_key, a glob source_key and an unknown one into source and extra_data', async () => {
    const exact = (
      await gw.submit(key, { event_id: uniq('e'), first_name: 'Vali', metadata: { source_key: 'ig_spring' } })
    ).json().lead;
    expect(exact).toMatchObject({ source: 'Instagram spring campaign', invited_by: null });
    const glob = (
      await gw.submit(key, {
        event_id: uniq('e'),
        first_name: 'Vali',
        metadata: { source_key: 'ref_jasur_01', campaign: 'x' },
      })
    ).json().lead;
    expect(glob).toMatchObject({
      source: 'Referral link',
      invited_by: ids.jasur,
      extra_data: { source_key: 'ref_jasur_01', campaign: 'x' },
    });
    const unknown = (
      await gw.submit(key, { event_id: uniq('e'), first_name: 'Vali', metadata: { source_key: 'tiktok' } })
    ).json().lead;
    expect(unknown).toMatchObject({ source: null, extra_data: { source_key: 'tiktok' } });
  });

  it('merges metadata into extra_data without overwriting existing keys, and never changes stage or tags on attach', async () => {
    const ext = uniq('tg');
    const first = (
      await gw.submit(key, {
        event_id: uniq('e'),
        external_contact_id: ext,
        first_name: 'Yulduz',
        metadata: { source_key: 'ig_spring', a: 1 },
      })
    ).json();
    await gw.admin('POST', `/admin/v1/leads/${first.lead.id}/move`, { stage: ids.contacted });
    const second = (
      await gw.submit(key, {
        event_id: uniq('e'),
        external_contact_id: ext,
        first_name: 'Yulduz',
        metadata: { a: 2, b: 3 },
      })
    ).json();
    expect(second.lead.extra_data).toEqual({ source_key: 'ig_spring', a: 1, b: 3 });
    expect(second.lead.stage).toBe(ids.contacted);
    expect(second.lead.tag_ids).toEqual([ids.telegramTag]);
  });

  it(`keeps extra_data within ${EXTRA_DATA_MAX_BYTES} bytes over many attaches; what does not fit stays on its submission`, async () => {
    const person = uniq('tg');
    const metadata = (n: number) =>
      Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`a${n}_${i}`, 'x'.repeat(500)]));
    let lead: { extra_data: Record<string, unknown> } | undefined;
    for (let n = 0; n < 8; n++) {
      const res = await gw.submit(key, {
        event_id: uniq('big'),
        external_contact_id: person,
        first_name: 'Meta',
        metadata: metadata(n),
      });
      expect(res.statusCode).toBe(n === 0 ? 201 : 200);
      lead = res.json().lead;
    }
    const bytes = Buffer.byteLength(JSON.stringify(lead!.extra_data));
    expect(bytes).toBeLessThanOrEqual(EXTRA_DATA_MAX_BYTES);
    expect(bytes).toBeGreaterThan(EXTRA_DATA_MAX_BYTES - 600);
    expect(lead!.extra_data).toHaveProperty('a0_0');
    expect(lead!.extra_data).not.toHaveProperty('a7_0');
    // The person's id is unique; LIKE's '_' is a wildcard, so a key such as 'a7_0' would also match random ids.
    const sent = await gw.inspect.submissions.list({ body: { like: `%${person}%` } }, ['body']);
    const last = sent.map((s) => s.body as { metadata: Record<string, unknown> }).find((b) => 'a7_0' in b.metadata);
    expect(Object.keys(last!.metadata)).toHaveLength(30);
  });

  it('applies answers sent with the lead and reports them in its answers member', async () => {
    const res = (
      await gw.submit(key, { event_id: uniq('e'), first_name: 'Zafar', answers: { laptop: 'yes', shoe_size: 42 } })
    ).json();
    expect(res.answers).toEqual({
      written: ['laptop'],
      unchanged: [],
      kept_existing: [],
      unmapped: ['shoe_size'],
      invalid: [],
    });
    expect(res.lead.custom_field_values).toHaveLength(1);
  });

  it('reports empty result arrays when no answers are sent', async () => {
    const res = (await gw.submit(key, { event_id: uniq('e'), first_name: 'Zarina' })).json();
    expect(res.answers).toEqual({ written: [], unchanged: [], kept_existing: [], unmapped: [], invalid: [] });
  });
});
