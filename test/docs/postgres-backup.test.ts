// The logical backup docs/operations/backup.md shows, run as written on a throwaway cluster: pg_dump while a
// gateway takes leads, createdb and pg_restore into a new database owned by the gateway's role, and a
// gateway started on the result answers every lead acknowledged before the dump as a replay.
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { CHILD_ADMIN_TOKEN, DEMO_V1_KEY, postJson, spawnGateway, type ChildGateway } from '../support/child-gateway.js';
import { clusterOrSkip, freshDatabase, type TestPostgres } from '../support/postgres.js';
import { commandsOf } from './doc-commands.js';
import { execOwned } from '../support/owned.js';

const run = execOwned;
let cluster: TestPostgres | null = null;
const gateways: ChildGateway[] = [];
const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-backup-'));
beforeAll(async () => void (cluster = await clusterOrSkip()), 60_000);
afterAll(async () => {
  await Promise.all(gateways.map((g) => g.stop()));
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The one documented command that starts with `program`. */
function documented(program: string): string {
  const found = commandsOf('docs/operations/backup.md').filter((c) => c.text.startsWith(`${program} `));
  expect(
    found.map((c) => c.text),
    program,
  ).toHaveLength(1);
  return found[0]!.text;
}

/** The server binaries' folder first on PATH, so the client programs match the server's version. */
function pathWithServerBinaries(): string {
  const root = '/usr/lib/postgresql';
  const newest = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a))[0] : undefined;
  return [newest ? join(root, newest, 'bin') : null, process.env.PATH ?? '/usr/bin:/bin'].filter(Boolean).join(':');
}

const submit = (gw: ChildGateway, eventId: string) =>
  postJson<{ lead: { id: string }; replayed?: boolean }>(
    `${gw.address}/api/integrations/v1/leads/`,
    { authorization: `Bearer ${DEMO_V1_KEY}` },
    {
      event_id: eventId,
      external_contact_id: `telegram:${eventId}`,
      first_name: 'Aziza',
    },
  );

describe('the documented logical backup on PostgreSQL', () => {
  it(
    'dumps while a gateway writes, restores into a new database, and a gateway there replays every lead acknowledged before',
    { timeout: 90_000 },
    async (context) => {
      if (!cluster) return context.skip();
      const url = new URL(await freshDatabase(cluster.url));
      const admin = new pg.Client({ connectionString: cluster.url });
      await admin.connect();
      try {
        // The role the docs restore as: it owns the new database, and the restored tables (--no-owner).
        await admin.query(
          "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'gateway') THEN CREATE ROLE gateway LOGIN; END IF; END $$",
        );
      } finally {
        await admin.end();
      }
      const gw = await spawnGateway({
        env: { DATABASE_URL: url.toString(), DEMO_MODE: 'true', ADMIN_TOKEN: CHILD_ADMIN_TOKEN },
      });
      gateways.push(gw);
      const before = new Map<string, string>();
      for (let i = 0; i < 5; i++) {
        const res = await submit(gw, `backup:before:${i}`);
        expect(res.status).toBe(201);
        before.set(`backup:before:${i}`, res.body.lead.id);
      }

      const restored = `gateway_restored_${process.pid}`;
      const server = `127.0.0.1:${url.port}`;
      const onTestServer = (text: string) =>
        text
          .replaceAll('-h db.internal', `-h 127.0.0.1 -p ${url.port}`)
          .replaceAll('db.internal:5432', server)
          .replaceAll('gateway_restored', restored)
          .replaceAll('/backups/', `${dir}/`);
      const shell = (text: string, env: Record<string, string> = {}) =>
        run('bash', ['-c', text], {
          cwd: dir,
          env: { PATH: pathWithServerBinaries(), HOME: dir, ...env },
          timeout: 60_000,
        });

      // The dump runs while the gateway keeps taking new leads: it blocks none of them.
      const during = Array.from({ length: 20 }, (_, i) => `backup:during:${i}`);
      const [, answers] = await Promise.all([
        shell(onTestServer(documented('pg_dump')), { DATABASE_URL: url.toString() }),
        Promise.all(during.map((eventId) => submit(gw, eventId))),
      ]);
      expect(answers.map((a) => a.status)).toEqual(during.map(() => 201));
      const dumps = readdirSync(dir).filter((f) => /^gateway-\d{4}-\d\d-\d\d\.dump$/.test(f));
      expect(dumps).toHaveLength(1);
      await gw.stop();

      await shell(onTestServer(documented('createdb')));
      await shell(
        onTestServer(documented('pg_restore')).replace(/\S+\/gateway-2026-11-22\.dump/, join(dir, dumps[0]!)),
      );

      const onRestored = await spawnGateway({
        env: {
          DATABASE_URL: `postgres://gateway@${server}/${restored}`,
          DEMO_MODE: 'true',
          ADMIN_TOKEN: CHILD_ADMIN_TOKEN,
        },
      });
      gateways.push(onRestored);
      expect((await fetch(`${onRestored.address}/readyz`)).status).toBe(200);
      for (const [eventId, leadId] of before) {
        const res = await submit(onRestored, eventId);
        expect({ eventId, status: res.status, replayed: res.body.replayed, lead: res.body.lead.id }).toEqual({
          eventId,
          status: 200,
          replayed: true,
          lead: leadId,
        });
      }
      // A lead taken during the dump is in it or not, whole: its resend is a replay or a first time, never a fault.
      for (const eventId of during) expect([200, 201], eventId).toContain((await submit(onRestored, eventId)).status);
    },
  );
});
