// Operators list leads filtered by stage, integration and custom field values.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../helper.js';
import { stableId } from '../../src/rules/ids.js';
import { LEAD_FILTER_CONDITIONS_MAX } from '../../src/admin/schemas.js';

let gw: Gateway;
const leads: Record<string, string> = {};

beforeAll(async () => {
  gw = await startGateway();
  const bot = await gw.issueKey('brightpath:telegram-bot');
  const form = await gw.issueKey('brightpath:website-form');
  const people: [string, string, Record<string, unknown>][] = [
    ['ali', bot, { laptop: 'yes', days: 'mon,fri', video_watched: true, age: 19 }],
    ['bek', bot, { laptop: 'no', days: 'mon', video_watched: false, age: '19.0' }],
    ['cho', form, { laptop: '1', goal: 'Python job' }],
  ];
  for (const [name, key, answers] of people) {
    const res = await gw.submit(key, { event_id: `list-${name}`, first_name: name, answers });
    leads[name] = res.json().lead.id;
  }
});
afterAll(() => gw.close());

const list = async (query: string) => {
  const res = await gw.admin('GET', `/admin/v1/leads?workspace=brightpath&${query}`);
  return {
    status: res.statusCode,
    names: res.statusCode === 200 ? (res.json().items as { first_name: string }[]).map((l) => l.first_name).sort() : [],
    body: res.json(),
  };
};

describe('GET /admin/v1/leads', () => {
  it('filters by single choice (through labels), multiple choice, boolean, number and text', async () => {
    expect((await list('field=laptop:Present')).names).toEqual(['ali', 'cho']);
    expect((await list('field=laptop:Absent')).names).toEqual(['bek']);
    expect((await list('field=study_days:Monday')).names).toEqual(['ali', 'bek']);
    expect((await list('field=study_days:Monday,Friday')).names).toEqual(['ali']);
    expect((await list('field=video_watched:false')).names).toEqual(['bek']);
    expect((await list('field=applicant_age:19')).names).toEqual(['ali', 'bek']);
    expect((await list('field=goal:Python job')).names).toEqual(['cho']);
    expect((await list('field=laptop:Present&field=video_watched:true')).names).toEqual(['ali']);
  });

  it('filters by integration and stage, and never shows another workspace', async () => {
    expect((await list('integration=brightpath:website-form')).names).toEqual(['cho']);
    expect((await list(`stage=${stableId('brightpath', 'stage', 'Admissions', 'Contacted')}`)).names).toEqual([]);
    const dental = await gw.admin('GET', '/admin/v1/leads?workspace=smile-dental');
    expect(dental.json().items).toEqual([]);
  });

  it('pages with next_before', async () => {
    const first = await list('limit=2');
    expect(first.body.items).toHaveLength(2);
    const rest = await list(`limit=2&before=${encodeURIComponent(first.body.next_before)}`);
    expect(rest.body.items).toHaveLength(1);
    expect(rest.body.next_before).toBeNull();
  });

  it('refuses a filter on an unknown field or with a value that does not fit', async () => {
    expect((await list('field=shoe_size:42')).status).toBe(422);
    const bad = await list('field=laptop:maybe');
    expect(bad.status).toBe(422);
    expect(bad.body.detail).toMatch(/'maybe' is not an option of Laptop/);
    expect((await gw.admin('GET', '/admin/v1/leads?workspace=nowhere')).statusCode).toBe(404);
  });

  it(`takes at most ${LEAD_FILTER_CONDITIONS_MAX} field conditions; 1,000 are a 422, not a 500`, async () => {
    const conditions = (n: number) => Array.from({ length: n }, () => 'field=laptop:Present').join('&');
    expect(await list(conditions(LEAD_FILTER_CONDITIONS_MAX))).toMatchObject({ status: 200, names: ['ali', 'cho'] });
    const over = await list(conditions(1000));
    expect(over.status).toBe(422);
    expect(over.body.errors).toEqual([
      { path: '/field', message: `must be given at most ${LEAD_FILTER_CONDITIONS_MAX} times` },
    ]);
  });
});
