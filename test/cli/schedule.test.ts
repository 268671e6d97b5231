// `lead-gateway schedule-switch-off`, `schedule` and `cancel-switch-off`, as child processes on a test
// gateway's database and over its admin API (--url): the same sentences and the same refusals.
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../helper.js';
import { cliOn } from '../support/cli.js';

const HANDLE = 'brightpath:website-form';
let gw: Gateway;
let cli: ReturnType<typeof cliOn>;
let url: string;
beforeAll(async () => {
  gw = await startGateway();
  cli = cliOn(gw);
  await gw.issueKey(HANDLE);
  await gw.app.listen({ port: 0, host: '127.0.0.1' });
  url = `http://127.0.0.1:${(gw.app.server.address() as AddressInfo).port}`;
});
afterAll(() => gw.close());

describe('the scheduled switch-off from the CLI', { timeout: 60_000 }, () => {
  it('schedules, shows and cancels it; refuses a time without a zone (usage) and a time in the past', async () => {
    const noZone = await cli('schedule-switch-off', HANDLE, '--at', '2027-01-01T10:00:00');
    expect(noZone.code).toBe(2);
    expect(noZone.err).toMatch(/--at: must be a date and time with its zone/);
    const past = await cli('schedule-switch-off', HANDLE, '--at', '2020-01-01T10:00:00Z');
    expect(past.code).not.toBe(0);
    expect(past.err).toMatch(/is in the past/);
    expect((await cli('schedule', HANDLE)).code).toBe(1);

    const at = new Date(Date.now() + 3_600_000).toISOString();
    const made = await cli('schedule-switch-off', HANDLE, '--at', at, '--retry-minutes', '30', '--reason', 'planned');
    expect(made.code).toBe(0);
    // Database mode names the person at the terminal (cli:<user>).
    expect(made.out.trim()).toMatch(new RegExp(`^The switch-off is scheduled at ${at}, by cli:[^.]+\\.$`));
    const by = /by (cli:[^.]+)\./.exec(made.out)![1]!;
    // Over the admin API: the same schedule, the actor the credential's operator.
    const shown = await cli('--url', url, 'schedule', HANDLE);
    expect(shown.out.trim()).toBe(`The switch-off is scheduled at ${at}, by ${by}.`);
    const json = JSON.parse((await cli('--json', 'schedule', HANDLE)).out) as Record<string, unknown>;
    expect(json).toMatchObject({ at, status: 'pending', retry_minutes: 30, force: false });

    const cancelled = await cli('--url', url, 'cancel-switch-off', HANDLE);
    expect(cancelled.code).toBe(0);
    expect(cancelled.out.trim()).toMatch(new RegExp(`^The scheduled switch-off at ${at} was cancelled: cancelled by `));
    expect((await cli('cancel-switch-off', HANDLE)).code).toBe(1);
  });
});
