// What docs/operations/backup.md says a lost synchronous standby does to the gateway, on a throwaway cluster
// whose synchronous standby never connects: the write answers 503 with Retry-After, /readyz says
// unavailable, the commit waits on the server, and once the standby requirement is lifted the commit
// stands and the resend is a replay.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { CHILD_ADMIN_TOKEN, DEMO_V1_KEY, postJson, spawnGateway, type ChildGateway } from '../support/child-gateway.js';
import { clusterOrSkip, freshDatabase, type TestPostgres } from '../support/postgres.js';

let cluster: TestPostgres | null = null;
let gateway: ChildGateway | null = null;
beforeAll(async () => void (cluster = await clusterOrSkip({ own: true })), 60_000);
afterAll(async () => {
  await gateway?.stop();
  await cluster?.stop();
});

const submit = (gw: ChildGateway, eventId: string) =>
  postJson<{ replayed?: boolean; code?: string }>(
    `${gw.address}/api/integrations/v1/leads/`,
    { authorization: `Bearer ${DEMO_V1_KEY}` },
    {
      event_id: eventId,
      external_contact_id: `telegram:${eventId}`,
      first_name: 'Aziza',
    },
  );

async function until<T>(probe: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (let i = 0; ; i++) {
    const value = await probe();
    if (done(value) || i === 100) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('a synchronous standby that is gone', () => {
  it(
    'makes writes answer 503 while their commits wait on the server; lifted, the commit stands and the resend is a replay',
    { timeout: 60_000 },
    async (context) => {
      // The setting is the whole server's: only on a cluster of this file's own.
      if (!cluster || process.env.TEST_DATABASE_URL) return context.skip();
      const url = await freshDatabase(cluster.url);
      gateway = await spawnGateway({
        env: {
          DATABASE_URL: url,
          DEMO_MODE: 'true',
          ADMIN_TOKEN: CHILD_ADMIN_TOKEN,
          DATABASE_STATEMENT_TIMEOUT_MS: '1000',
        },
      });
      expect((await submit(gateway, 'sync:before')).status).toBe(201);

      const admin = new pg.Client({ connectionString: cluster.url });
      await admin.connect();
      const setStandby = async (names: string | null) => {
        await admin.query(
          names === null
            ? 'ALTER SYSTEM RESET synchronous_standby_names'
            : `ALTER SYSTEM SET synchronous_standby_names = '${names}'`,
        );
        await admin.query('SELECT pg_reload_conf()');
        // The reload reaches the server's processes a moment later: wait until a new session sees it.
        await until(
          async () => {
            const probe = new pg.Client({ connectionString: cluster!.url });
            await probe.connect();
            try {
              return (await probe.query<{ synchronous_standby_names: string }>('SHOW synchronous_standby_names'))
                .rows[0]!.synchronous_standby_names;
            } finally {
              await probe.end();
            }
          },
          (value) => value === (names ?? ''),
        );
      };
      const waitingCommits = async () =>
        Number(
          (await admin.query<{ n: string }>("SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event = 'SyncRep'"))
            .rows[0]!.n,
        );
      try {
        await setStandby('absent_standby');
        const refused = await submit(gateway, 'sync:during');
        expect({ status: refused.status, code: refused.body.code, retryAfter: refused.retryAfter }).toEqual({
          status: 503,
          code: 'service-unavailable',
          retryAfter: '1',
        });
        const ready = await fetch(`${gateway.address}/readyz`);
        expect({ status: ready.status, reason: ((await ready.json()) as { reason?: string }).reason }).toEqual({
          status: 503,
          reason: 'unavailable',
        });
        // The commit is made on the primary and waits there for the standby that never comes.
        expect(await waitingCommits()).toBeGreaterThan(0);

        await setStandby(null);
        expect(await until(waitingCommits, (n) => n === 0)).toBe(0);
        const resent = await submit(gateway, 'sync:during');
        expect({ status: resent.status, replayed: resent.body.replayed }).toEqual({ status: 200, replayed: true });
        expect(
          await until(
            () => fetch(`${gateway!.address}/readyz`).then((r) => r.status),
            (s) => s === 200,
          ),
        ).toBe(200);
      } finally {
        await setStandby(null).catch(() => {});
        await admin.end();
      }
    },
  );
});
