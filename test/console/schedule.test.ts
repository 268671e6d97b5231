// The scheduled switch-off in the console: the service team schedules it from the integration's page
// (a UTC time), sees it there and in the overview's "Next moment", and cancels it; a workspace owner
// sees it and cannot act; a moment in the past is refused on the page, nothing stored.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../helper.js';
import { addUser, consoleClient, type ConsoleClient } from '../support/console.js';

const HANDLE = 'brightpath:website-form';
const PAGE = `/console/integrations/${HANDLE}`;

let gw: Gateway;
let team: ConsoleClient;
let owner: ConsoleClient;
beforeAll(async () => {
  gw = await startGateway({ console: { secureCookies: false } });
  await addUser(gw, 'team-schedule');
  await addUser(gw, 'owner-schedule', 'brightpath');
  team = consoleClient(gw.app, { gw });
  owner = consoleClient(gw.app, { gw });
  expect((await team.signIn('team-schedule')).statusCode).toBe(303);
  expect((await owner.signIn('owner-schedule')).statusCode).toBe(303);
  await gw.issueKey(HANDLE);
});
afterAll(() => gw.close());

const text = (html: string, testId: string) =>
  new RegExp(`data-testid="${testId}"[^>]*>([^<]*)<`).exec(html)?.[1] ?? null;

describe('the scheduled switch-off in the console', () => {
  it('is scheduled from the page in UTC, shown there and in the overview, and cancelled', async () => {
    expect(text((await team.get(PAGE)).body, 'schedule')).toBe('None scheduled.');
    const at = new Date(Date.now() + 3 * 3_600_000);
    const local = at.toISOString().slice(0, 16);
    const res = await team.post(
      `${PAGE}/switch-off/schedule`,
      { at: local, retry_minutes: '30', reason: 'planned' },
      PAGE,
    );
    expect(res.statusCode).toBe(303);
    const shown = `${local.replace('T', ' ')} UTC`;
    expect(text((await team.get(PAGE)).body, 'schedule')).toBe(
      `The switch-off is scheduled at ${shown}, by team-schedule.`,
    );
    const overview = (await team.get('/console/integrations')).body;
    const row = overview.slice(overview.indexOf(`data-handle="${HANDLE}"`));
    expect(/data-col="next-moment">([^<]*)</.exec(row)?.[1]).toBe(`switch-off at ${shown}`);

    // The owner sees it, and may not act.
    expect(text((await owner.get(PAGE)).body, 'schedule')).toContain('The switch-off is scheduled at');
    expect((await owner.get(PAGE)).body).not.toContain('data-testid="schedule-form"');
    expect((await owner.post(`${PAGE}/switch-off/schedule/cancel`, {}, PAGE)).statusCode).toBe(403);

    expect((await team.post(`${PAGE}/switch-off/schedule/cancel`, {}, PAGE)).statusCode).toBe(303);
    expect(text((await team.get(PAGE)).body, 'schedule')).toMatch(/was cancelled: cancelled by team-schedule\.$/);
  });

  it('refuses a moment in the past on the page, and keeps what was there', async () => {
    const res = await team.post(`${PAGE}/switch-off/schedule`, { at: '2020-01-01T10:00' }, PAGE);
    expect(res.statusCode).toBe(422);
    expect(res.body).toContain('is in the past');
    expect(text((await team.get(PAGE)).body, 'schedule')).toMatch(/was cancelled/);
  });
});
