// Three gateway processes on one PostgreSQL database: a key renewed, or the old interface switched
// off, through one of them is refused by the others on their very next request (docs/runbook.md: a renewal
// revokes every current key at once, a switch-off is a 403 everywhere), though each remembers the keys it read.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHILD_ADMIN_TOKEN, spawnGateway, type ChildGateway } from '../support/child-gateway.js';
import { clusterOrSkip, freshDatabase, type TestPostgres } from '../support/postgres.js';
import { USAGE_FLUSH_MS } from '../../src/migration/usage.js';

let cluster: TestPostgres | null = null;
let replicas: ChildGateway[] = [];
beforeAll(async () => {
  cluster = await clusterOrSkip();
  if (!cluster) return;
  const env = { DATABASE_URL: await freshDatabase(cluster.url), RATE_LIMIT_PER_MINUTE: '100000' };
  // One first, so the others find the schema migrated (starting together is tested elsewhere).
  replicas = [await spawnGateway({ env })];
  replicas.push(...(await Promise.all([spawnGateway({ env }), spawnGateway({ env })])));
}, 90_000);
afterAll(async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  await cluster?.stop();
});

const INTEGRATION = 'brightpath:telegram-bot';
const LEGACY_KEY = 'replicas-legacy-key-0123456789abcdef';
const admin = (replica: ChildGateway, path: string, body: unknown = {}) =>
  fetch(`${replica.address}/admin/v1/integrations/${INTEGRATION}/${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${CHILD_ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
let sent = 0;
const lead = (replica: ChildGateway, key: string) =>
  fetch(`${replica.address}/api/integrations/v1/leads/`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ event_id: `replicas-${++sent}`, first_name: 'Lola', external_contact_id: `tg:${sent}` }),
  }).then((r) => r.status);
const legacy = (replica: ChildGateway) =>
  fetch(`${replica.address}/api/bots/api/info/`, { headers: { 'x-bot-api-key': LEGACY_KEY } }).then((r) => r.status);

describe('three replicas on one PostgreSQL', () => {
  it('refuse a renewed key on their very next request, whichever replica renewed it', async (context) => {
    if (!cluster) return context.skip();
    let key = ((await (await admin(replicas[0]!, 'keys')).json()) as { key: string }).key;
    for (let round = 0; round < 6; round++) {
      const via = replicas[round % 3]!;
      // Every replica has read the key, and remembers it.
      for (const r of replicas) expect([await lead(r, key), await lead(r, key)]).toEqual([201, 201]);
      const renewed = await admin(via, 'keys/renew', { reason: `round ${round}` });
      expect(renewed.status).toBe(201);
      for (const r of replicas) expect(await lead(r, key)).toBe(401);
      key = ((await renewed.json()) as { key: string }).key;
    }
  });

  it('answer 403 on the old interface right after a switch-off through any one of them, and 200 after a rollback', async (context) => {
    if (!cluster) return context.skip();
    expect((await admin(replicas[0]!, 'keys/import', { key: LEGACY_KEY })).status).toBe(201);
    for (let round = 0; round < 6; round++) {
      for (const r of replicas) expect([await legacy(r), await legacy(r)]).toEqual([200, 200]);
      expect((await admin(replicas[round % 3]!, 'switch-off', { force: true, reason: `round ${round}` })).status).toBe(
        200,
      );
      for (const r of replicas) expect(await legacy(r)).toBe(403);
      expect((await admin(replicas[(round + 1) % 3]!, 'rollback', { reason: `round ${round}` })).status).toBe(200);
    }
    for (const r of replicas) expect(await legacy(r)).toBe(200);
  });

  it('count the old interface on every replica, even one killed a second after its calls (report and quiet period)', async (context) => {
    if (!cluster) return context.skip();
    const report = async () =>
      (await (
        await fetch(`${replicas[0]!.address}/admin/v1/integrations/${INTEGRATION}/report`, {
          headers: { authorization: `Bearer ${CHILD_ADMIN_TOKEN}` },
        })
      ).json()) as {
        legacy: { calls_24h: number };
      };
    // Every replica has written the calls of the tests before (each writes its counts every USAGE_FLUSH_MS).
    await new Promise((resolve) => setTimeout(resolve, 4 * USAGE_FLUSH_MS));
    const before = (await report()).legacy.calls_24h;
    const doomed = replicas[2]!;
    for (let i = 0; i < 5; i++) expect(await legacy(doomed)).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    replicas = replicas.filter((r) => r !== doomed);
    expect((await report()).legacy.calls_24h).toBe(before + 5);
    // The switch-off check reads the same counts: without force it is refused within the quiet period.
    const refused = await admin(replicas[1]!, 'switch-off', { reason: 'quiet?', quiet_period_hours: 1 });
    expect(refused.status).toBe(409);
  });
});
