// Storage faults: the child gateway runs under strace, which makes a window of its fsync/fdatasync
// calls fail with EIO. No request whose commit failed may get a 2xx, the process must keep serving,
// and resends must succeed once the fault stops.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { DEMO_V1_KEY, postJson, spawnGateway } from '../support/child-gateway.js';
import { FULL, reportFigures } from './scale.js';
import { logLinesOnly, secretsFoundIn } from '../support/secrets.js';
import { writeFileSync } from 'node:fs';

const hasStrace = (() => {
  try {
    execFileSync('strace', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
if (!hasStrace && process.env.CI)
  throw new Error('strace is required in CI for the storage-fault test (.ci/run installs it)');

const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-faults-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.skipIf(!hasStrace)('fsync failing with EIO', () => {
  it('answers no 2xx for a failed commit, keeps serving, and takes the resends once the disk is back', async () => {
    const dbPath = join(dir, 'faults.db');
    // Syncs number FIRST..LAST of the process fail; start-up (migrations, demo key) uses fewer than FIRST.
    const FIRST = 60;
    const LAST = FULL ? 140 : 90;
    const gw = await spawnGateway({
      env: { DATABASE_PATH: dbPath, DEMO_MODE: 'true', RATE_LIMIT_PER_MINUTE: '1000000' },
      wrapper: [
        'strace',
        '-f',
        '-qq',
        '-o',
        '/dev/null',
        '-e',
        'trace=fsync,fdatasync',
        '-e',
        `inject=fsync,fdatasync:error=EIO:when=${FIRST}..${LAST}`,
      ],
      capture: true,
      startTimeoutMs: 60_000,
    });
    const leads = `${gw.address}/api/integrations/v1/leads/`;
    const auth = { authorization: `Bearer ${DEMO_V1_KEY}` };
    const acknowledged = new Set<string>();
    const refused = new Set<string>();
    const statuses = new Map<number, number>();
    const problems: string[] = [];
    try {
      // One request at a time, so each commit is one group with one sync: the window is crossed for sure.
      const total = FULL ? 600 : 250;
      for (let i = 0; i < total; i++) {
        const eventId = `fault-${i}`;
        const res = await postJson<{ type?: string; status?: number }>(leads, auth, {
          event_id: eventId,
          external_contact_id: `fault:${i}`,
          first_name: 'Disk',
        });
        if (res.status === 503 && res.retryAfter !== '1') problems.push(`${eventId}: 503 without Retry-After`);
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (res.status === 201) acknowledged.add(eventId);
        else if (
          res.status === 503 &&
          res.body.type === 'urn:lead-gateway:problem:service-unavailable' &&
          res.body.status === 503
        )
          refused.add(eventId);
        else problems.push(`${eventId}: ${res.status} ${JSON.stringify(res.body)}`);
      }
      // The fault has stopped: every refused event is taken on its resend, and nothing was half-written.
      let resentCreated = 0;
      let resentReplayed = 0;
      for (const eventId of refused) {
        const res = await postJson<{ replayed?: boolean }>(leads, auth, {
          event_id: eventId,
          external_contact_id: `fault:${eventId.slice(6)}`,
          first_name: 'Disk',
        });
        if (res.status === 201) resentCreated++;
        else if (res.status === 200 && res.body.replayed) resentReplayed++;
        else problems.push(`resend ${eventId}: ${res.status} ${JSON.stringify(res.body)}`);
      }
      const ready = await fetch(`${gw.address}/readyz`);
      expect(ready.status).toBe(200);
      expect(gw.child.exitCode).toBeNull();

      await gw.stop('SIGTERM');
      const db = new Database(dbPath, { readonly: true });
      const stored = new Set(
        db.prepare("SELECT event_id FROM submissions WHERE endpoint = 'leads'").pluck().all() as string[],
      );
      const integrity = db.pragma('integrity_check', { simple: true });
      db.close();
      const lost = [...acknowledged].filter((e) => !stored.has(e));
      reportFigures(`storage faults (${FULL ? 'full' : 'quick'})`, {
        requests: [...statuses.values()].reduce((a, b) => a + b, 0),
        failing_syncs: LAST - FIRST + 1,
        answered_2xx: acknowledged.size,
        answered_5xx: refused.size,
        resent_created: resentCreated,
        resent_replayed: resentReplayed,
        lost: lost.length,
        integrity: String(integrity),
      });
      expect(problems).toEqual([]);
      expect(refused.size).toBeGreaterThan(0); // the window was hit
      // A refused event that a resend found committed would mean a failed commit had stood after all.
      expect(resentReplayed).toBe(0);
      expect(resentCreated).toBe(refused.size);
      expect(lost).toEqual([]);
      expect(integrity).toBe('ok');
      // The demo key was on every request, the errors were logged: it is in neither the log nor the files.
      writeFileSync(join(dir, 'output.log'), logLinesOnly(gw.output()));
      expect(secretsFoundIn([join(dir, 'output.log'), dbPath, `${dbPath}-wal`], [DEMO_V1_KEY])).toEqual([]);
    } finally {
      await gw.stop('SIGKILL');
    }
  }, 180_000);
});
