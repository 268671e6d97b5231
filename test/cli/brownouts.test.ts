// `lead-gateway brownout`, `brownouts` and `cancel-brownout`, as child processes on a test gateway's
// database and over its admin API (--url): bad input exits 2 on either, a refusal 1, and both show
// the same window.
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../helper.js';
import { cliOn } from '../support/cli.js';
import type { BrownoutEntry } from '../../src/migration/brownout-windows.js';

const HANDLE = 'brightpath:website-form';
let gw: Gateway;
let cli: ReturnType<typeof cliOn>;
let url: string;
beforeAll(async () => {
  gw = await startGateway();
  cli = cliOn(gw);
  await gw.app.listen({ port: 0, host: '127.0.0.1' });
  url = `http://127.0.0.1:${(gw.app.server.address() as AddressInfo).port}`;
});
afterAll(() => gw.close());

describe('brownout windows from the CLI', { timeout: 60_000 }, () => {
  it('adds one on the database, lists and cancels it over the admin API; bad input exits 2, an unknown window 1', async () => {
    const noZone = await cli('brownout', HANDLE, '--start', '2027-02-20T10:00:00', '--minutes', '10');
    expect(noZone.code).toBe(2);
    expect(noZone.err).toMatch(/--start: must be a date and time with its zone/);
    // In the past: refused by the service itself (422 over the admin API), exit 2 on the database too.
    const past = await cli('brownout', HANDLE, '--start', '2020-01-01T10:00:00Z', '--minutes', '10');
    expect(past.code).toBe(2);
    expect(past.err).toMatch(/start: is in the past/);

    const start = new Date(Math.ceil((Date.now() + 86_400_000) / 60_000) * 60_000).toISOString();
    const made = await cli('--json', 'brownout', HANDLE, '--start', start, '--minutes', '10');
    expect(made.code).toBe(0);
    const entry = JSON.parse(made.out) as BrownoutEntry;
    // Database mode names the person at the terminal (cli:<user>).
    expect(entry).toMatchObject({ source: 'stored', start, minutes: 10, status: 'scheduled' });
    expect(entry.created_by).toMatch(/^cli:/);

    const listed = await cli('--url', url, 'brownouts', HANDLE);
    expect(listed.code).toBe(0);
    const row = listed.out.split('\n').find((l) => l.startsWith(entry.id)) ?? '';
    expect(row.split(/\s+/)).toEqual([entry.id, 'stored', start, entry.end, '10', 'scheduled', entry.created_by]);

    const cancelled = await cli('--url', url, 'cancel-brownout', HANDLE, entry.id);
    expect(cancelled.code).toBe(0);
    expect(cancelled.out.trim()).toBe(
      `Cancelled: Scheduled: ${start.slice(0, 16).replace('T', ' ')} UTC, 10 min, set by ${entry.created_by} (${entry.id}).`,
    );
    const again = await cli('cancel-brownout', HANDLE, entry.id);
    expect(again.code).toBe(1);
    expect(again.err).toMatch(/has no brownout window/);
  });
});
