// The console's answers, review and leads pages over HTTP: unmapped answer keys with counts, escaped
// examples and a YAML snippet that the rules schema takes; "apply stored answers" writes them once the
// snippet is in the rules; the review list; the leads browser's filters; every page held to the
// owner's workspace; a bad query is a 400 page, never a 500.
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_RULES, startGateway, type Gateway } from '../helper.js';
import { addUser, consoleClient, type ConsoleClient } from '../support/console.js';
import { RulesFileSchema } from '../../src/rules/schema.js';
import { EXAMPLE_VALUE_CHARS } from '../../src/answers/unmapped.js';
import { KEPT_ANSWERS_PER_KEY } from '../../src/answers/keep.js';
import { stableId } from '../../src/rules/ids.js';

let gw: Gateway;
let rulesDir: string;
let bot: string;
let team: ConsoleClient;
let owner: ConsoleClient;
let otherOwner: ConsoleClient;
const HANDLE = 'brightpath:telegram-bot';
const ANSWERS = `/console/integrations/${HANDLE}/answers`;
const LONG = 'x'.repeat(EXAMPLE_VALUE_CHARS + 40);
let n = 0;
const next = (p: string) => `${p}-${++n}`;

beforeAll(async () => {
  rulesDir = mkdtempSync(join(tmpdir(), 'lead-gateway-console-answers-'));
  cpSync(EXAMPLE_RULES, rulesDir, { recursive: true });
  gw = await startGateway({ rulesDir, console: { secureCookies: false } });
  bot = await gw.issueKey(HANDLE);
  await addUser(gw, 'dilnoza');
  await addUser(gw, 'bright-owner', 'brightpath');
  await addUser(gw, 'smile-owner', 'smile-dental');
  [team, owner, otherOwner] = [
    consoleClient(gw.app, { gw }),
    consoleClient(gw.app, { gw }),
    consoleClient(gw.app, { gw }),
  ];
  expect((await team.signIn('dilnoza')).statusCode).toBe(303);
  expect((await owner.signIn('bright-owner')).statusCode).toBe(303);
  expect((await otherOwner.signIn('smile-owner')).statusCode).toBe(303);
});
afterAll(() => gw.close());

async function newLead(extra: Record<string, unknown> = {}) {
  const ext = next('tg');
  const res = await gw.submit(bot, {
    event_id: next('lead'),
    external_contact_id: ext,
    first_name: 'Malika',
    ...extra,
  });
  expect(res.statusCode).toBe(201);
  return { ext, id: res.json().lead.id as string };
}
const answer = async (ext: string, answers: Record<string, unknown>) => {
  const res = await gw.app.inject({
    method: 'POST',
    url: '/api/integrations/v1/leads/answers/',
    headers: { authorization: `Bearer ${bot}` },
    payload: { event_id: next('a'), external_contact_id: ext, answers },
  });
  expect(res.statusCode).toBe(200);
  return res.json().answers as { unmapped: string[] };
};
const rowOf = (html: string, key: string) =>
  new RegExp(`<tr data-key="${key}">([\\s\\S]*?)</tr>`).exec(html)?.[1] ?? '';
const unescape = (s: string) =>
  s
    .replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'")
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&amp;', '&');
const snippetsOf = (html: string, key: string) => {
  const section =
    new RegExp(`<section class="snippet"[^>]*data-snippet="${key}">([\\s\\S]*?)</section>`).exec(html)?.[1] ?? '';
  const code = (testid: string) => {
    const m = new RegExp(`data-testid="${testid}"><code>([\\s\\S]*?)</code>`).exec(section);
    return m ? unescape(m[1]!) : null;
  };
  return { field: code('field-snippet'), answers: code('answers-snippet') };
};

let first: { ext: string; id: string };

describe('unmapped answer keys', () => {
  it('lists each key with its count, last seen and up to three escaped, cut example values', async () => {
    first = await newLead();
    const second = await newLead();
    expect((await answer(first.ext, { english_level: 'B2', lesson_count: 3 })).unmapped).toEqual([
      'english_level',
      'lesson_count',
    ]);
    await answer(second.ext, { english_level: '<script>alert(1)</script>', lesson_count: '4' });
    await answer(second.ext, { english_level: LONG });
    await answer(second.ext, { english_level: 'C1' });

    const page = await team.get(ANSWERS);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('2 key(s) waiting');
    const english = rowOf(page.body, 'english_level');
    expect(english).toMatch(/data-col="count">4</);
    // The three most recent distinct values: the script is escaped, the long one cut.
    expect(english).toContain('<code>C1</code>');
    expect(english).toContain(`<code>${'x'.repeat(EXAMPLE_VALUE_CHARS - 1)}…</code>`);
    expect(english).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(english).not.toContain('<code>B2</code>');
    expect(page.body).not.toContain('<script>alert(1)');
    expect(rowOf(page.body, 'lesson_count')).toMatch(/data-col="count">2</);
  });

  it('gives each key a YAML snippet that the rules schema takes, with a type guessed from the examples', async () => {
    const page = (await team.get(ANSWERS)).body;
    const english = snippetsOf(page, 'english_level');
    const lessons = snippetsOf(page, 'lesson_count');
    expect(parse(english.field!)).toEqual({
      custom_fields: { english_level: { name: 'English level', type: 'text' } },
    });
    expect(parse(lessons.field!)).toEqual({
      custom_fields: { lesson_count: { name: 'Lesson count', type: 'number' } },
    });
    expect(parse(english.answers!)).toEqual({ answers: { english_level: { field: 'english_level' } } });

    // Both snippets added where the page says, to the workspace's own rules file: the schema takes it.
    const file = join(rulesDir, 'brightpath.yaml');
    const rules = parse(readFileSync(file, 'utf8'));
    for (const s of [english, lessons]) {
      Object.assign(rules.workspace.custom_fields, parse(s.field!).custom_fields);
      Object.assign(
        rules.integrations.find((i: { slug: string }) => i.slug === 'telegram-bot').answers,
        parse(s.answers!).answers,
      );
    }
    const checked = RulesFileSchema.safeParse(rules);
    expect(checked.success, JSON.stringify(checked.error?.issues)).toBe(true);
    writeFileSync(file, stringify(rules));
  });

  it('applies the stored answers once the rules map them: the fields are written, the keys listed no more, the action audited', async () => {
    // Before the reload nothing is mapped: applying leaves every answer waiting.
    const early = await owner.post(`${ANSWERS}/apply`, {}, ANSWERS);
    expect(early.statusCode).toBe(200);
    expect(early.body).toContain('0 answer(s) applied');
    expect(early.body).toContain('6 still have no mapping');

    expect((await gw.admin('POST', '/admin/v1/rules/reload')).statusCode).toBe(200);
    // Mapped now, not yet applied: listed as waiting to be applied, without its YAML.
    const mapped = (await owner.get(ANSWERS)).body;
    expect(rowOf(mapped, 'english_level')).toContain('Mapped now: apply the stored answers');
    expect(snippetsOf(mapped, 'english_level').answers).toBeNull();
    const applied = await owner.post(`${ANSWERS}/apply`, {}, ANSWERS);
    expect(applied.statusCode).toBe(200);
    expect(applied.body).toMatch(/6 answer\(s\) applied: \d+ written/);
    expect(applied.body).toContain('No unmapped answers are waiting.');

    const lead = (await gw.admin('GET', `/admin/v1/leads/${first.id}`)).json<{
      custom_field_values: { field: string; text_value: string | null; decimal_value: string | null }[];
    }>();
    const value = (key: string) =>
      lead.custom_field_values.find((v) => v.field === stableId('brightpath', 'field', key));
    expect(value('english_level')?.text_value).toBe('B2');
    expect(Number(value('lesson_count')?.decimal_value)).toBe(3);

    const audit = (await gw.admin('GET', `/admin/v1/integrations/${HANDLE}/audit`)).json<{
      items: { action: string; actor: string; details: { applied: number } }[];
    }>().items;
    expect(audit[0]).toMatchObject({
      action: 'stored_answers_applied',
      actor: 'bright-owner',
      details: { applied: 6 },
    });

    // The lead's page shows the value and who wrote it.
    const leadPage = await owner.get(`/console/leads/${first.id}`);
    expect(leadPage.statusCode).toBe(200);
    expect(leadPage.body).toMatch(
      /<th scope="row">English level<\/th><td data-col="value">B2<\/td><td>integration: brightpath:telegram-bot<\/td>/,
    );
  });

  it("prints a date-time value in the console's one format, and refuses a lead id that is no uuid with the 400 page", async () => {
    const { id } = await newLead();
    const set = await gw.admin('PUT', `/admin/v1/leads/${id}/fields/call_back_at`, {
      value: '2026-11-20T09:30:00Z',
      written_by: { kind: 'employee', ref: 'jasur' },
    });
    expect(set.statusCode, set.body).toBe(200);
    const page = (await owner.get(`/console/leads/${id}`)).body;
    expect(page).toMatch(/<th scope="row">Call back at<\/th><td data-col="value">2026-11-20 09:30 UTC<\/td>/);
    expect(page).not.toMatch(/\d{4}-\d\d-\d\dT\d\d:\d\d/);
    const bad = await owner.get('/console/leads/not-a-lead');
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('data-code="bad-request"');
  });

  it("holds another workspace's owner out of the pages and the action (404), and a signed-out POST changes nothing", async () => {
    for (const path of [ANSWERS, `/console/integrations/${HANDLE}/review`])
      expect((await otherOwner.get(path)).statusCode).toBe(404);
    expect((await otherOwner.post(`${ANSWERS}/apply`, {}, '/console/integrations')).statusCode).toBe(404);
    const stranger = consoleClient(gw.app, { gw });
    expect((await stranger.get(ANSWERS)).statusCode).toBe(303);
  });
});

describe('answers not kept', () => {
  it('are counted on the page once an integration keeps no more of a key', async () => {
    expect((await team.get(ANSWERS)).body).not.toContain('data-testid="not-kept"');
    const integrationId = gw.rules.current().findIntegration(HANDLE)!.id;
    await gw.store.transact((tx) =>
      tx.answers.addKept([{ integrationId, key: 'console_full', answers: KEPT_ANSWERS_PER_KEY, bytes: 10 }]),
    );
    const { ext } = await newLead();
    await answer(ext, { console_full: 'a' });
    await answer(ext, { console_full: 'b' });
    const page = (await team.get(ANSWERS)).body;
    expect(page).toMatch(/data-testid="not-kept"><strong>2 more answer\(s\) not kept:/);
    await gw.store.transact((tx) =>
      tx.answers.addKept([{ integrationId, key: 'console_full', answers: -KEPT_ANSWERS_PER_KEY, bytes: -10 }]),
    );
  });
});

describe('the review list', () => {
  it('lists the submissions that need review with their reason and a link to the lead', async () => {
    const phone = '+998901112233';
    await gw.submit(bot, { event_id: next('lead'), first_name: 'Sardor', phone });
    const eventId = next('review');
    const flagged = (await gw.submit(bot, { event_id: eventId, first_name: 'Shahlo', phone })).json();
    expect(flagged.needs_review).toBe(true);
    const page = await owner.get(`/console/integrations/${HANDLE}/review`);
    expect(page.statusCode).toBe(200);
    const row = new RegExp(`<tr data-event="${eventId}">[\\s\\S]*?</tr>`).exec(page.body)?.[0] ?? '';
    expect(row).toContain('&quot;Shahlo&quot;');
    expect(row).toContain(`href="/console/leads/${flagged.lead.id}"`);
  });
});

describe('the leads browser', () => {
  it('filters by custom field values as the admin API does, and pages on', async () => {
    const withLaptop = await newLead();
    await answer(withLaptop.ext, { laptop: 'yes' });
    const page = await team.get('/console/leads?workspace=brightpath&fk=laptop&fv=Present&fk=&fv=');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`data-lead="${withLaptop.id}"`);
    expect(page.body).not.toContain(`data-lead="${first.id}"`);
    // The filter stays in the form: the field chosen and its value.
    expect(page.body).toContain('<option value="laptop" selected>');
    const byLevel = await team.get('/console/leads?workspace=brightpath&fk=english_level&fv=B2');
    expect(byLevel.body).toContain(`data-lead="${first.id}"`);
    const all = await owner.get('/console/leads');
    expect(all.statusCode).toBe(200);
    expect(all.body).toContain(`data-lead="${first.id}"`);
  });

  it('says on the form what a filter value its field cannot take is, with a 400', async () => {
    const res = await team.get('/console/leads?workspace=brightpath&fk=lesson_count&fv=many');
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('data-testid="filter-error"');
  });

  it('answers a malformed query with a 400 page, never a 500', async () => {
    for (const query of [
      'stage=not-a-uuid',
      'before=yesterday',
      `${'fk=a&'.repeat(25)}fv=b`,
      `fk=goal&fv=${'v'.repeat(300)}`,
    ]) {
      const res = await team.get(`/console/leads?${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(res.headers['content-type']).toContain('text/html');
    }
  });

  it("keeps a workspace owner to their workspace's leads: another workspace, its integration and its lead are 404s", async () => {
    expect((await otherOwner.get('/console/leads?workspace=brightpath')).statusCode).toBe(404);
    expect((await otherOwner.get(`/console/leads?integration=${HANDLE}`)).statusCode).toBe(404);
    const res = await otherOwner.get(`/console/leads/${first.id}`);
    expect(res.statusCode).toBe(404);
    expect(res.body).not.toContain('Malika');
    const own = await otherOwner.get('/console/leads');
    expect(own.statusCode).toBe(200);
    expect(own.body).not.toContain(`data-lead="${first.id}"`);
  });
});
