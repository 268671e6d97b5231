// A .env file in the working directory is read; the environment wins over it; its bad values are named.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { builtMain } from '../support/child-gateway.js';
import { spawnOwned } from '../support/owned.js';

const ROOT = join(import.meta.dirname, '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-envfile-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const FILE_TOKEN = 'file-admin-token-Qw8Zp3Lx7Nc2Vb6Mk1Hj';
const ENV_TOKEN = 'env-admin-token-Rt5Yu9Io2Pa4Sd8Fg3Hk';
const baseEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp' };

describe('.env', () => {
  it('is read from the working directory, beneath the environment', async () => {
    const cwd = join(dir, 'good');
    spawnSync('mkdir', ['-p', cwd]);
    writeFileSync(
      join(cwd, '.env'),
      [
        "# the operator's file",
        'PORT=0',
        `DATABASE_PATH=${join(cwd, 'g.db')}`,
        `RULES_DIR=${join(ROOT, 'rules')}`,
        `ADMIN_TOKEN=${FILE_TOKEN}`,
        'LOG_LEVEL=INFO',
        'DEMO_MODE=FALSE',
        '',
      ].join('\n'),
    );
    const child = spawnOwned(process.execPath, [builtMain()], {
      cwd,
      env: { ...baseEnv, ADMIN_TOKEN: ENV_TOKEN },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const address = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`not listening:\n${out}`)), 20_000);
      const onData = (chunk: Buffer) => {
        out += chunk.toString();
        const m = /"address":"(http:\/\/[^"]+)".*"msg":"lead-gateway listening"/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
    });
    try {
      const admin = (token: string) =>
        fetch(`${address}/admin/v1/integrations`, { headers: { authorization: `Bearer ${token}` } });
      expect((await admin(ENV_TOKEN)).status).toBe(200);
      expect((await admin(FILE_TOKEN)).status).toBe(401);
      expect(out).toMatch(/"file":"\.env","variables":\["DATABASE_PATH","DEMO_MODE","LOG_LEVEL","PORT","RULES_DIR"\]/);
      expect(out).not.toContain(FILE_TOKEN);
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.on('exit', resolve));
    }
  });

  it('a bad value in it stops start-up, named with the file', () => {
    const cwd = join(dir, 'bad');
    spawnSync('mkdir', ['-p', cwd]);
    writeFileSync(join(cwd, '.env'), `RATE_LIMIT_PER_MINUTE=0\nRULES_DIR=${join(ROOT, 'rules')}\n`);
    const run = spawnSync(process.execPath, [builtMain(), '--demo'], {
      cwd,
      env: { ...baseEnv, PORT: '0' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/RATE_LIMIT_PER_MINUTE must be at least 1 \(set in \.env\)/);
  });
});
