// `npm start` runs the gateway as npm's own child (exec: no shell between), so the `pid` of its log
// lines is the process to signal: SIGHUP there reloads the rules while it keeps serving (npm itself
// dies of SIGHUP, docs/operations/deployment.md), and SIGTERM to npm is passed on and stops it.
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/child-gateway.js';
import { spawnOwned } from '../support/owned.js';

const DEMO_LEGACY_KEY = 'lgbot_demo-legacy-key-not-for-production';

/** The parent pid of a process, from /proc (Linux). */
const parentOf = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
};

async function until(condition: () => boolean, what: string, ms = 60_000): Promise<void> {
  for (const end = Date.now() + ms; !condition();) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('npm start', () => {
  it(
    "runs the gateway as npm's direct child, which reloads its rules on SIGHUP and stops with npm on SIGTERM",
    { timeout: 120_000 },
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-npm-start-'));
      const rulesDir = join(dir, 'rules');
      cpSync(join(ROOT, 'rules'), rulesDir, { recursive: true });
      const npm = spawnOwned('npm', ['start'], {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: process.env.HOME ?? dir,
          HOST: '127.0.0.1',
          PORT: '0',
          DATABASE_PATH: join(dir, 'demo.db'),
          RULES_DIR: rulesDir,
          LOG_LEVEL: 'info',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      npm.stdout!.on('data', (c: Buffer) => (out += c.toString()));
      npm.stderr!.on('data', (c: Buffer) => (out += c.toString()));
      const npmExited = new Promise<void>((resolve) => npm.on('exit', () => resolve()));
      let pid = 0;
      try {
        // prestart builds first, then the gateway says where it listens, with its pid.
        await until(
          () => /"msg":"lead-gateway listening"/.test(out) || npm.exitCode !== null,
          'the gateway to listen',
          90_000,
        );
        const listening = /"pid":(\d+),.*"address":"(http:\/\/[^"]+)".*"msg":"lead-gateway listening"/.exec(out);
        expect(listening, out).not.toBeNull();
        pid = Number(listening![1]);
        const address = listening![2]!;
        expect(parentOf(pid)).toBe(npm.pid);
        expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(0, 2).join(' ')).toBe(
          'node dist/main.js',
        );

        const integrationName = async () => {
          const res = await fetch(`${address}/api/bots/api/info/`, { headers: { 'x-bot-api-key': DEMO_LEGACY_KEY } });
          return ((await res.json()) as { integration: { name: string } }).integration.name;
        };
        expect(await integrationName()).toBe('Admissions Telegram bot');

        const file = join(rulesDir, 'brightpath.yaml');
        writeFileSync(
          file,
          readFileSync(file, 'utf8').replace(
            'name: Admissions Telegram bot',
            'name: Admissions Telegram bot, reloaded',
          ),
        );
        process.kill(pid, 'SIGHUP');
        await until(() => /"msg":"rules reloaded"/.test(out), 'the rules reload');
        expect(await integrationName()).toBe('Admissions Telegram bot, reloaded');
        expect(npm.exitCode).toBeNull();
        expect((await fetch(`${address}/healthz`)).status).toBe(200);

        npm.kill('SIGTERM');
        await npmExited;
        await until(() => !existsSync(`/proc/${pid}`), 'the gateway to exit', 15_000);
        expect(out).toMatch(/"signal":"SIGTERM".*"msg":"stopping: draining in-flight requests"/);
      } finally {
        if (npm.exitCode === null && npm.signalCode === null) npm.kill('SIGKILL');
        // A gateway left behind (a shell between npm and it, or a failed step) is ended too.
        if (pid > 0 && existsSync(`/proc/${pid}`)) process.kill(pid, 'SIGKILL');
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
