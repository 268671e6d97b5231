// /readyz tells the truth: a read-only database file and a full disk make it 503, and it recovers.
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEMO_V1_KEY, postJson, spawnGateway } from '../support/child-gateway.js';

// chattr +i and a tmpfs mount need root; CI runs as root, so there it must not be skipped.
const isRoot = process.getuid?.() === 0;
if (!isRoot && process.env.CI) throw new Error('the readiness test needs root (chattr, mount) in CI');
if (!isRoot) console.log('skipped: /readyz under a read-only file and a full disk (needs root for chattr and mount)');

const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-ready-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const readyz = async (address: string) => {
  const res = await fetch(`${address}/readyz`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};
/** Waits past the one-second reuse of a readiness verdict. */
const nextVerdict = () => new Promise((resolve) => setTimeout(resolve, 1_100));

describe.skipIf(!isRoot)('/readyz', () => {
  it('is 503 read-only while the database files are immutable, and ready again once they are not', async () => {
    const path = join(dir, 'ro', 'gateway.db');
    const gw = await spawnGateway({
      env: { DATABASE_PATH: path, DEMO_MODE: 'true', ADMIN_TOKEN: '', READY_MIN_FREE_MB: '0' },
      capture: true,
    });
    const files = [path, `${path}-wal`];
    try {
      expect((await readyz(gw.address)).status).toBe(200);
      execFileSync('chattr', ['+i', ...files]);
      await nextVerdict();
      const refused = await readyz(gw.address);
      expect(refused.status).toBe(503);
      expect(refused.body).toMatchObject({ code: 'service-unavailable', reason: 'read-only' });
      expect(refused.body.detail).toMatch(/cannot be written/);
      // A submission is refused as a whole too, with the advice to resend.
      const lead = await postJson(
        `${gw.address}/api/integrations/v1/leads/`,
        { authorization: `Bearer ${DEMO_V1_KEY}` },
        { event_id: 'ro-1', first_name: 'Ro' },
      );
      expect(lead.status).toBe(503);
      execFileSync('chattr', ['-i', ...files]);
      await nextVerdict();
      expect((await readyz(gw.address)).status).toBe(200);
    } finally {
      execFileSync('chattr', ['-i', ...files]);
      await gw.stop();
    }
    expect(gw.output()).toMatch(/"msg":"readiness check failed"/);
  });

  it('is 503 disk-full on a full file system, and ready again once there is room', async () => {
    const mount = join(dir, 'small');
    mkdirSync(mount);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', mount]);
    const gw = await spawnGateway({
      env: { DATABASE_PATH: join(mount, 'gateway.db'), DEMO_MODE: 'true', ADMIN_TOKEN: '', READY_MIN_FREE_MB: '2' },
      capture: true,
    });
    const filler = join(mount, 'filler');
    try {
      expect((await readyz(gw.address)).status).toBe(200);
      // Fill the file system to the last byte.
      const fd = openSync(filler, 'w');
      const chunk = Buffer.alloc(64 * 1024, 1);
      try {
        for (;;) writeSync(fd, chunk);
      } catch (error) {
        expect((error as NodeJS.ErrnoException).code).toBe('ENOSPC');
      } finally {
        closeSync(fd);
      }
      await nextVerdict();
      const refused = await readyz(gw.address);
      expect(refused.status).toBe(503);
      expect(refused.body).toMatchObject({ code: 'service-unavailable', reason: 'disk-full' });
      rmSync(filler);
      await nextVerdict();
      expect((await readyz(gw.address)).status).toBe(200);
    } finally {
      await gw.stop();
      execFileSync('umount', ['-l', mount]);
    }
  });
});
