// `lead-gateway porting-guide`: the guide as Markdown on stdout, or the admin API's JSON with --json,
// as a child process on the file a running gateway serves from.
import { execFile, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, EXAMPLE_RULES, startGateway, type Gateway } from '../helper.js';
import { builtCli } from '../support/child-gateway.js';

let gw: Gateway;
let base: string;
const ROOT = join(import.meta.dirname, '..', '..');
const KEY = 'porting-cli-legacy-key';
const HANDLE = 'brightpath:telegram-bot';

beforeAll(async () => {
  gw = await startGateway();
  base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
  gw.secrets.add(KEY);
  await gw.admin('POST', `/admin/v1/integrations/${HANDLE}/keys/import`, { key: KEY });
  const res = await gw.app.inject({
    method: 'POST',
    url: '/api/bots/api/leads/',
    headers: { 'x-bot-api-key': KEY },
    payload: {
      first_name: 'Shahzoda',
      phone: '+998 97 111 22 33',
      extra_data: { telegram_id: 31337, course: 'data' },
      stage: 'x',
    },
  });
  expect(res.statusCode).toBe(201);
  // The admin route writes the counts and samples held in memory before it reads them.
  expect((await gw.admin('GET', `/admin/v1/integrations/${HANDLE}/porting-guide`)).statusCode).toBe(200);
});
afterAll(() => gw.close());

/** With --url the gateway of this process answers: the child runs while this process's event loop goes on. */
function cliOverApi(...args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const env = { ...process.env, LEAD_GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN, RULES_DIR: EXAMPLE_RULES };
    execFile(
      process.execPath,
      [builtCli(), '--url', base, ...args],
      { cwd: ROOT, env, encoding: 'utf8', timeout: 20_000 },
      (error, out, err) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, out, err }),
    );
  });
}

function cli(...args: string[]) {
  const run = spawnSync(process.execPath, [builtCli(), ...args], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_PATH: join(gw.dir, 'gateway.db'), RULES_DIR: EXAMPLE_RULES },
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { code: run.status, out: run.stdout, err: run.stderr };
}

describe('lead-gateway porting-guide', { timeout: 60_000 }, () => {
  it('prints the Markdown guide: the fix-by date, the routes, the v1 curl, no personal data', () => {
    const run = cli('porting-guide', HANDLE);
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/^# Porting guide: Admissions Telegram bot \(brightpath:telegram-bot\)$/m);
    expect(run.out).toContain('**Fix by 2027-03-01**');
    expect(run.out).toMatch(
      /^\| POST \/api\/bots\/api\/leads\/ \| 1 \| \S+ \| POST \/api\/integrations\/v1\/leads\/ \|$/m,
    );
    expect(run.out).toContain(`"external_contact_id":"telegram:<id>"`);
    expect(run.out).toContain(`"answers":{"course":"data"}`);
    expect(run.out).toMatch(/^\| stage \| 1 \|/m);
    for (const value of ['Shahzoda', '111', '31337']) expect(run.out).not.toContain(value);
  });

  it('prints with --json what the admin API answers', async () => {
    const run = cli('--json', 'porting-guide', HANDLE);
    expect(run.code).toBe(0);
    const printed = JSON.parse(run.out) as Record<string, unknown>;
    const served = (await gw.admin('GET', `/admin/v1/integrations/${HANDLE}/porting-guide`)).json<
      Record<string, unknown>
    >();
    expect({ ...printed, generated_at: null }).toEqual({ ...served, generated_at: null });
  });

  it('prints the same guide from a running gateway with --url', async () => {
    const run = await cliOverApi('porting-guide', HANDLE);
    expect(run.code).toBe(0);
    expect(run.err).toContain(`gateway: ${base}`);
    expect(run.out.replace(/^Generated \S+/m, '')).toBe(
      cli('porting-guide', HANDLE).out.replace(/^Generated \S+/m, ''),
    );
  });

  it('refuses an unknown integration, naming the known ones', () => {
    const run = cli('porting-guide', 'nobody:none');
    expect(run.code).not.toBe(0);
    expect(run.err).toContain('No integration "nobody:none"');
  });
});
