// The newcomer's path: demo mode starts on SQLite with the example rules and prints keys that work.
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

describe('demo mode', () => {
  it('prints a working v1 key and admin token, then drains and exits 0 on SIGTERM', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-demo-'));
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', '--demo'], {
      cwd: join(import.meta.dirname, '..'),
      env: { ...process.env, DATABASE_PATH: join(dir, 'demo.db'), PORT: '0', LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    let out = '';
    const banner = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no banner; output so far:\n${out}`)), 15_000);
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (/admin token:/.test(out)) {
          clearTimeout(timer);
          resolve(out);
        }
      });
      child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    });
    const address = /demo mode\) at (\S+)/.exec(banner)![1]!;
    const v1Key = /v1 key:\s+(\S+)/.exec(banner)![1]!;
    const adminToken = /admin token:\s+(\S+)/.exec(banner)![1]!;

    const lead = await fetch(`${address}/api/integrations/v1/leads/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${v1Key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ event_id: 'demo-1', first_name: 'Aziza', phone: '+998901234567' }),
    });
    expect(lead.status).toBe(201);
    const admin = await fetch(`${address}/admin/v1/integrations`, { headers: { authorization: `Bearer ${adminToken}` } });
    expect(admin.status).toBe(200);
    expect((await fetch(`${address}/readyz`)).status).toBe(200);

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
