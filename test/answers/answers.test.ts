// POST /api/integrations/v1/leads/answers/: result arrays, provenance, conflict policy, the answer log.
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_RULES, startGateway, type Gateway } from '../helper.js';
import { stableId } from '../../src/rules/ids.js';
import { applyStoredUnmapped } from '../../src/answers/engine.js';

let gw: Gateway;
let rulesDir: string;
let bot: string;
let form: string;
let n = 0;
const next = (p: string) => `${p}-${++n}`;

beforeAll(async () => {
  // A private copy of the rules: one test edits a mapping and reloads.
  rulesDir = mkdtempSync(join(tmpdir(), 'lead-gateway-rules-'));
  cpSync(EXAMPLE_RULES, rulesDir, { recursive: true });
  gw = await startGateway({ rulesDir });
  bot = await gw.issueKey('brightpath:telegram-bot');
  form = await gw.issueKey('brightpath:website-form');
});
afterAll(() => gw.close());

const answer = (key: string, body: unknown) =>
  gw.app.inject({
    method: 'POST',
    url: '/api/integrations/v1/leads/answers/',
    headers: { authorization: `Bearer ${key}` },
    payload: body as object,
  });

/** Submits a lead for a new person through the bot; returns its external id and lead id. */
async function newPerson(extra: Record<string, unknown> = {}) {
  const ext = next('telegram');
  const res = await gw.submit(bot, {
    event_id: next('lead'),
    external_contact_id: ext,
    first_name: 'Sevara',
    ...extra,
  });
  expect(res.statusCode).toBe(201);
  return { ext, lead: res.json().lead as { id: string }, contactId: res.json().contact_id as string };
}

const field = (key: string) => stableId('brightpath', 'field', key);
const option = (key: string, label: string) => stableId('brightpath', 'option', key, label);
const valueOf = (lead: { custom_field_values: { field: string }[] }, key: string) =>
  lead.custom_field_values.find((v) => v.field === field(key));
const lead = async (id: string) => (await gw.admin('GET', `/admin/v1/leads/${id}`)).json();

describe('result arrays', () => {
  it('written: the value lands in the field, with its option detail', async () => {
    const p = await newPerson();
    const res = await answer(bot, { event_id: next('a'), external_contact_id: p.ext, answers: { laptop: 'yes' } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ lead_id: p.lead.id, contact_id: p.contactId, replayed: false, deleted: false });
    expect(res.json().answers).toEqual({
      written: ['laptop'],
      unchanged: [],
      kept_existing: [],
      unmapped: [],
      invalid: [],
    });
    expect(valueOf(await lead(p.lead.id), 'laptop')).toMatchObject({
      option: option('laptop', 'Present'),
      option_detail: { id: option('laptop', 'Present'), label: 'Present', field: field('laptop') },
    });
  });

  it('unchanged: the same value again', async () => {
    const p = await newPerson();
    await answer(bot, { event_id: next('a'), external_contact_id: p.ext, answers: { laptop: 'yes' } });
    const res = await answer(bot, { event_id: next('a'), external_contact_id: p.ext, answers: { laptop: 'Present' } });
    expect(res.json().answers.unchanged).toEqual(['laptop']);
  });

  it('written again when the integration changes a value it wrote itself', async () => {
    const p = await newPerson();
    await answer(bot, { event_id: next('a'), external_contact_id: p.ext, answers: { laptop: 'yes' } });
    const res = await answer(bot, { event_id: next('a'), external_contact_id: p.ext, answers: { laptop: 'no' } });
    expect(res.json().answers.written).toEqual(['laptop']);
    expect(valueOf(await lead(p.lead.id), 'laptop')).toMatchObject({ option: option('laptop', 'Absent') });
  });

  it('kept_existing: a value an employee set is kept', async () => {
    const p = await newPerson();
    const set = await gw.admin('PUT', `/admin/v1/leads/${p.lead.id}/fields/goal`, {
      value: 'Career change',
      written_by: { kind: 'employee', ref: 'dilnoza' },
    });
    expect(set.statusCode).toBe(200);
    const res = await answer(bot, {
      event_id: next('a'),
      external_contact_id: p.ext,
      answers: { goal: 'Just curious' },
    });
    expect(res.json().answers.kept_existing).toEqual(['goal']);
    expect(valueOf(await lead(p.lead.id), 'goal')).toMatchObject({ text_value: 'Career change' });
  });

  it('unmapped: a key without a mapping is reported and stored', async () => {
    const p = await newPerson();
    const res = await answer(bot, {
      event_id: next('a'),
      external_contact_id: p.ext,
      answers: { shoe_size: 42, laptop: 'yes' },
    });
    expect(res.json().answers).toMatchObject({ unmapped: ['shoe_size'], written: ['laptop'] });
    expect(await gw.inspect.answers.count({ leadId: p.lead.id, key: 'shoe_size', outcome: 'unmapped', raw: 42 })).toBe(
      1,
    );
  });

  it('invalid: a value that does not fit is reported with a readable error, stored, and the rest still written', async () => {
    const p = await newPerson();
    const res = await answer(bot, {
      event_id: next('a'),
      external_contact_id: p.ext,
      answers: { laptop: 'maybe', goal: 'Get a job' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().answers).toMatchObject({
      written: ['goal'],
      invalid: [{ key: 'laptop', error: "'maybe' is not an option of Laptop; options: Present, Absent" }],
    });
    expect(await gw.inspect.answers.count({ leadId: p.lead.id, key: 'laptop', outcome: 'invalid', raw: 'maybe' })).toBe(
      1,
    );
  });
});

describe('every field type through the endpoint', () => {
  it('writes text, number, boolean, date, date-time, single and multiple choice', async () => {
    const p = await newPerson();
    const res = await answer(bot, {
      event_id: next('a'),
      external_contact_id: p.ext,
      answers: {
        goal: 'Frontend job',
        age: '19',
        video_watched: 'ha',
        trial_date: '2026-12-05',
        call_back_at: '2026-12-01T10:00:00+05:00',
        course: 'python',
        days: 'mon,fri',
      },
    });
    expect(res.json().answers.written).toEqual([
      'goal',
      'age',
      'video_watched',
      'trial_date',
      'call_back_at',
      'course',
      'days',
    ]);
    const l = await lead(p.lead.id);
    expect(valueOf(l, 'goal')).toMatchObject({ text_value: 'Frontend job' });
    expect(valueOf(l, 'applicant_age')).toMatchObject({ decimal_value: '19' });
    expect(valueOf(l, 'video_watched')).toMatchObject({ boolean_value: true });
    expect(valueOf(l, 'trial_date')).toMatchObject({ date_value: '2026-12-05' });
    expect(valueOf(l, 'call_back_at')).toMatchObject({ datetime_value: '2026-12-01T05:00:00.000Z' });
    expect(valueOf(l, 'preferred_course')).toMatchObject({ option: option('preferred_course', 'Python') });
    expect(valueOf(l, 'study_days')).toMatchObject({
      selected_options: [option('study_days', 'Monday'), option('study_days', 'Friday')],
      selected_options_detail: [{ label: 'Monday' }, { label: 'Friday' }],
    });
  });
});

describe('provenance and conflict policy', () => {
  it('records who wrote each value', async () => {
    const p = await newPerson();
    await answer(bot, { event_id: next('a'), external_contact_id: p.ext, answers: { laptop: 'yes' } });
    await gw.admin('PUT', `/admin/v1/leads/${p.lead.id}/fields/goal`, {
      value: 'x',
      written_by: { kind: 'import', ref: 'spring-fair.csv' },
    });
    const rows = await gw.inspect.fieldValues.list({ leadId: p.lead.id }, ['writtenByKind', 'writtenByRef', 'fieldId']);
    expect(rows).toEqual([
      { fieldId: field('goal'), writtenByKind: 'import', writtenByRef: 'spring-fair.csv' },
      {
        fieldId: field('laptop'),
        writtenByKind: 'integration',
        writtenByRef: stableId('brightpath', 'integration', 'telegram-bot'),
      },
    ]);
  });

  it('a value written by integration A is kept when integration B answers the same field', async () => {
    const p = await newPerson({ phone: '+998935551001' });
    await answer(bot, { event_id: next('a'), external_contact_id: p.ext, answers: { laptop: 'yes' } });
    // The web form submits the same person (matched by phone), which binds its own id to them.
    const viaForm = await gw.submit(form, {
      event_id: next('lead'),
      external_contact_id: 'web:55',
      first_name: 'Sevara',
      phone: '935551001',
    });
    expect(viaForm.json()).toMatchObject({ matched_by: 'phone', lead: { id: p.lead.id } });
    const res = await answer(form, {
      event_id: next('a'),
      external_contact_id: 'web:55',
      answers: { laptop: '0', goal: 'Python' },
    });
    expect(res.json().answers).toMatchObject({ kept_existing: ['laptop'], written: ['goal'] });
    expect(valueOf(await lead(p.lead.id), 'laptop')).toMatchObject({ option: option('laptop', 'Present') });
  });

  it('an employee value is kept, then overwritten once the field is switched to integration_wins', async () => {
    const p = await newPerson();
    await gw.admin('PUT', `/admin/v1/leads/${p.lead.id}/fields/laptop`, {
      value: 'Absent',
      written_by: { kind: 'employee', ref: 'jasur' },
    });
    const kept = await answer(bot, { event_id: next('a'), external_contact_id: p.ext, answers: { laptop: 'yes' } });
    expect(kept.json().answers.kept_existing).toEqual(['laptop']);

    const file = join(rulesDir, 'brightpath.yaml');
    const original = readFileSync(file, 'utf8');
    writeFileSync(
      file,
      original.replace(
        '        values: { yes: Present, no: Absent, ha: Present, "yo\'q": Absent }\n',
        '        values: { yes: Present, no: Absent, ha: Present, "yo\'q": Absent }\n        policy: integration_wins\n',
      ),
    );
    try {
      expect((await gw.admin('POST', '/admin/v1/rules/reload')).statusCode).toBe(200);
      const won = await answer(bot, { event_id: next('a'), external_contact_id: p.ext, answers: { laptop: 'yes' } });
      expect(won.json().answers.written).toEqual(['laptop']);
      expect(valueOf(await lead(p.lead.id), 'laptop')).toMatchObject({ option: option('laptop', 'Present') });
    } finally {
      writeFileSync(file, original);
      await gw.admin('POST', '/admin/v1/rules/reload');
    }
  });

  it('an unmapped key is stored, then applied once a mapping is added', async () => {
    const p = await newPerson();
    const first = await answer(bot, {
      event_id: next('a'),
      external_contact_id: p.ext,
      answers: { english_level: 'B2' },
    });
    expect(first.json().answers.unmapped).toEqual(['english_level']);
    const noMapping = (
      await gw.admin('POST', '/admin/v1/integrations/brightpath:telegram-bot/answers/apply-unmapped')
    ).json();
    expect(noMapping.applied.filter((a: { lead_id: string }) => a.lead_id === p.lead.id)).toEqual([]);

    const file = join(rulesDir, 'brightpath.yaml');
    const original = readFileSync(file, 'utf8');
    writeFileSync(
      file,
      original
        .replace(
          '      goal:\n        field: goal\n',
          '      goal:\n        field: goal\n      english_level:\n        field: goal\n',
        )
        .replace(/\n$/, '\n'),
    );
    try {
      expect((await gw.admin('POST', '/admin/v1/rules/reload')).statusCode).toBe(200);
      const report = (
        await gw.admin('POST', '/admin/v1/integrations/brightpath:telegram-bot/answers/apply-unmapped')
      ).json();
      expect(report.applied).toContainEqual({
        answer_id: expect.any(String),
        key: 'english_level',
        lead_id: p.lead.id,
        outcome: 'written',
        error: null,
      });
      expect(valueOf(await lead(p.lead.id), 'goal')).toMatchObject({ text_value: 'B2' });
      const again = (
        await gw.admin('POST', '/admin/v1/integrations/brightpath:telegram-bot/answers/apply-unmapped')
      ).json();
      expect(again.applied.filter((a: { lead_id: string }) => a.lead_id === p.lead.id)).toEqual([]);
      expect(again.remaining).toBe(0);
    } finally {
      writeFileSync(file, original);
      await gw.admin('POST', '/admin/v1/rules/reload');
    }
  });

  it("applies at most a bounded number per call, oldest first, says how many remain, and sets aside a deleted lead's answers", async () => {
    const people = [await newPerson(), await newPerson(), await newPerson()];
    for (const p of people)
      await answer(bot, {
        event_id: next('a'),
        external_contact_id: p.ext,
        answers: { english_level: `B${people.indexOf(p) + 1}` },
      });
    expect((await gw.admin('DELETE', `/admin/v1/leads/${people[0]!.lead.id}`)).statusCode).toBe(204);
    const file = join(rulesDir, 'brightpath.yaml');
    const original = readFileSync(file, 'utf8');
    writeFileSync(
      file,
      original.replace(
        '      goal:\n        field: goal\n',
        '      goal:\n        field: goal\n      english_level:\n        field: goal\n',
      ),
    );
    try {
      expect((await gw.admin('POST', '/admin/v1/rules/reload')).statusCode).toBe(200);
      const integration = gw.rules.current().findIntegration('brightpath:telegram-bot')!;
      const at = new Date().toISOString();
      // Other tests' waiting answers of this key are applied first: drain them, two at a time.
      let report = await gw.store.transact((tx) => applyStoredUnmapped(tx, integration, at, 2));
      const seen: string[] = [];
      for (let calls = 1; ; calls++) {
        expect(report.applied.length + report.skipped_deleted_lead).toBeLessThanOrEqual(2);
        seen.push(...report.applied.map((a) => a.lead_id));
        if (report.remaining === 0) break;
        expect(calls).toBeLessThan(50);
        report = await gw.store.transact((tx) => applyStoredUnmapped(tx, integration, at, 2));
      }
      expect(seen).toEqual(expect.arrayContaining([people[1]!.lead.id, people[2]!.lead.id]));
      expect(seen).not.toContain(people[0]!.lead.id);
      expect(valueOf(await lead(people[2]!.lead.id), 'goal')).toMatchObject({ text_value: 'B3' });
      // The deleted lead's answer is not waiting any more: the next call finds nothing.
      const after = (
        await gw.admin('POST', '/admin/v1/integrations/brightpath:telegram-bot/answers/apply-unmapped')
      ).json();
      expect(after).toMatchObject({ applied: [], skipped_deleted_lead: 0, remaining: 0 });
    } finally {
      writeFileSync(file, original);
      await gw.admin('POST', '/admin/v1/rules/reload');
    }
  });
});

describe('answers never change stage, responsible employee or tags', () => {
  it('leaves every member but custom fields and updated_at as it was', async () => {
    const p = await newPerson();
    const before = await lead(p.lead.id);
    const res = await answer(bot, {
      event_id: next('a'),
      external_contact_id: p.ext,
      answers: { laptop: 'yes', goal: 'x', stage: 'Enrolled', assigned_to: 'jasur', tags: 'VIP' },
    });
    expect(res.json().answers.unmapped).toEqual(['stage', 'assigned_to', 'tags']);
    const after = await lead(p.lead.id);
    const strip = ({ custom_field_values: _c, updated_at: _u, status_detail: _s, ...rest }: Record<string, unknown>) =>
      rest;
    expect(strip(after)).toEqual(strip(before));
    expect(after).toMatchObject({ stage: before.stage, assigned_to: before.assigned_to, tag_ids: before.tag_ids });
  });
});

describe('idempotency and the 404 flow', () => {
  it('replays the same event and refuses other data with 409', async () => {
    const p = await newPerson();
    const body = { event_id: next('a'), external_contact_id: p.ext, answers: { laptop: 'yes' } };
    const first = (await answer(bot, body)).json();
    const again = await answer(bot, body);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({ ...first, replayed: true });
    const other = await answer(bot, { ...body, answers: { laptop: 'no' } });
    expect(other.statusCode).toBe(409);
    expect(other.json().paths).toEqual(['/answers/laptop']);
    expect(await gw.inspect.answers.count({ submissionId: first.submission_id })).toBe(1);
  });

  it('replays the recorded answers byte for byte, in the order first answered (PostgreSQL kept them as jsonb, shortest key first)', async () => {
    const p = await newPerson();
    await answer(bot, { event_id: next('a'), external_contact_id: p.ext, answers: { laptop: 'yes' } });
    // One of each: written, unchanged, unmapped, invalid; jsonb would have put "invalid" and "written" before "unchanged".
    const body = {
      event_id: next('a'),
      external_contact_id: p.ext,
      answers: { goal: 'to learn', laptop: 'Present', no_such_question: 'x', days: 'someday' },
    };
    const first = await answer(bot, body);
    expect(first.statusCode).toBe(200);
    expect(Object.keys(first.json().answers)).toEqual(['written', 'unchanged', 'kept_existing', 'unmapped', 'invalid']);
    expect(first.json().answers).toMatchObject({
      written: ['goal'],
      unchanged: ['laptop'],
      unmapped: ['no_such_question'],
      invalid: [{ key: 'days' }],
    });
    const again = await answer(bot, body);
    expect(again.json().replayed).toBe(true);
    expect(memberText(again.body, 'answers')).toBe(memberText(first.body, 'answers'));
  });

  it('says deleted on a replay after the lead was deleted', async () => {
    const p = await newPerson();
    const body = { event_id: next('a'), external_contact_id: p.ext, answers: { goal: 'x' } };
    await answer(bot, body);
    await gw.admin('DELETE', `/admin/v1/leads/${p.lead.id}`);
    expect((await answer(bot, body)).json()).toMatchObject({ replayed: true, deleted: true, lead_id: p.lead.id });
  });

  it('does not reach a person another integration submitted', async () => {
    const p = await newPerson();
    const res = await answer(form, { event_id: next('a'), external_contact_id: p.ext, answers: { goal: 'x' } });
    expect(res.statusCode).toBe(404);
    expect(valueOf(await lead(p.lead.id), 'goal')).toBeUndefined();
  });

  it('requires all three members', async () => {
    const res = await answer(bot, { answers: [] });
    expect(res.statusCode).toBe(422);
    expect(
      res
        .json()
        .errors.map((e: { path: string }) => e.path)
        .sort(),
    ).toEqual(['/answers', '/event_id', '/external_contact_id']);
  });

  it('404 for an unknown person, then the same event_id works once the lead is submitted (real HTTP)', async () => {
    const base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
    const post = (path: string, body: unknown) =>
      fetch(`${base}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${bot}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const answers = {
      event_id: 'telegram:laptop:9001:1',
      external_contact_id: 'telegram:9001',
      answers: { laptop: 'yes' },
    };

    const missing = await post('/api/integrations/v1/leads/answers/', answers);
    expect(missing.status).toBe(404);
    const problem = (await missing.json()) as { detail: string };
    expect(problem.detail).toContain('Submit the lead first');
    expect(await gw.inspect.submissions.count({ eventId: 'telegram:laptop:9001:1' })).toBe(0);

    const created = await post('/api/integrations/v1/leads/', {
      event_id: 'telegram:lead:9001',
      external_contact_id: 'telegram:9001',
      first_name: 'Umar',
    });
    expect(created.status).toBe(201);
    const resent = await post('/api/integrations/v1/leads/answers/', answers);
    expect(resent.status).toBe(200);
    expect(((await resent.json()) as { answers: { written: string[] } }).answers.written).toEqual(['laptop']);
  });
});

/** The raw text of a top-level member's object value in a JSON body, as sent: its members in their order. */
function memberText(json: string, name: string): string {
  const start = json.indexOf(`"${name}":{`) + name.length + 3;
  expect(start).toBeGreaterThan(name.length + 2);
  let depth = 0;
  let inString = false;
  for (let i = start; i < json.length; i++) {
    const c = json[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if ((c === '}' || c === ']') && --depth === 0) return json.slice(start, i + 1);
  }
  throw new Error(`no member ${name} in ${json}`);
}
