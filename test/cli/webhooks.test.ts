// The webhook commands as child processes (few: each costs a process start), on a test gateway's
// database and over its admin API (--url): the secret printed once, bad input a usage error with nothing
// stored, a receiver's answer printed with its control characters escaped. The commands' two backends
// are also driven in this process for the actions whose printing the runs above already show.
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startGateway, type Gateway } from '../helper.js';
import { cliOn } from '../support/cli.js';
import { claimDue, recordAttempt } from '../../src/webhooks/outbox.js';
import { adminClient } from '../../src/cli/admin-client.js';
import { apiWebhooks, databaseWebhooks } from '../../src/cli/webhook-backend.js';
import type { Context } from '../../src/cli/database-backend.js';

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

const stored = () => gw.store.readOne((r) => r.webhooks.listEndpoints(null, 100));
const auditOf = async (id: string) =>
  (await gw.admin('GET', '/admin/v1/audit?limit=500'))
    .json<{ items: { integration_id: string; action: string; actor: string }[] }>()
    .items.filter((e) => e.integration_id === id)
    .map((e) => `${e.action} by ${e.actor}`)
    .reverse();

describe('the webhook commands', { timeout: 90_000 }, () => {
  it('add an endpoint on the database and over the admin API, printing its secret once', async () => {
    const bad = await cli('webhook-add', 'http://hooks.example.com/x', '--events', 'lead.needs_review');
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/\/url: must use https/);
    expect(await stored()).toEqual([]);

    const added = await cli(
      '--json',
      'webhook-add',
      'https://hooks.example.com/crm',
      '--events',
      'integration.switched_off, brownout.ended',
      '--workspace',
      'brightpath',
      '--description',
      'CRM alerts',
    );
    expect(added.code, added.err).toBe(0);
    const json = JSON.parse(added.out) as { id: string; secret: string; workspace_id: string };
    const [row] = await stored();
    expect(row).toMatchObject({
      id: json.id,
      secret: json.secret,
      eventTypes: ['integration.switched_off', 'brownout.ended'],
      description: 'CRM alerts',
    });
    expect(json.workspace_id).toBe(
      [...gw.rules.current().workspaces.values()].find((w) => w.slug === 'brightpath')!.id,
    );

    const notSubscribable = await cli('--url', url, 'webhook-add', 'https://hooks.example.com/all', '--events', 'ping');
    expect(notSubscribable.code).toBe(2);
    expect(notSubscribable.err).toMatch(/--events: /);

    const rotated = await cli('--url', url, 'webhook-rotate', json.id);
    expect(rotated.code, rotated.err).toBe(0);
    const secret = /^secret: (whsec_\S+)$/m.exec(rotated.out)?.[1];
    expect(secret).toBe((await stored())[0]!.secret);
    expect(secret).not.toBe(json.secret);
    expect(rotated.out).toContain('This secret is shown now only, never again');
    expect(await auditOf(json.id)).toEqual([
      expect.stringMatching(/^webhook_endpoint_created by cli:/),
      'webhook_secret_rotated by automation',
    ]);
  });

  it('list endpoints and deliveries, a receiver’s answer with its control characters escaped', async () => {
    const [endpoint] = await stored();
    await gw.admin('POST', `/admin/v1/webhooks/endpoints/${endpoint!.id}/ping`);
    const [claimed] = await claimDue(gw.store, 10, 'cli-test', 30_000);
    const answer = '\u001b]0;owned\u0007\u001b[2Jrefused\nnext line';
    const attempt = {
      deliveryId: claimed!.delivery.id,
      at: new Date().toISOString(),
      statusCode: 503,
      durationMs: 41,
      responseHead: answer,
      error: null,
    };
    expect(await recordAttempt(gw.store, attempt, { status: 'failed' }, 'cli-test')).toBe(true);

    const log = await cli('webhook-deliveries', endpoint!.id);
    expect(log.code, log.err).toBe(0);
    // No control character reaches the terminal but the line ends.
    expect([...log.out].filter((c) => c !== '\n' && (c < ' ' || c === '\u007f'))).toEqual([]);
    expect(log.out).toContain('\\u001b]0;owned\\u0007\\u001b[2Jrefused\\nnext line');
    expect(log.out).toMatch(
      new RegExp(`${claimed!.delivery.id}\\s+${claimed!.event.id}\\s+failed\\s+1\\s+503\\s+41 ms`),
    );

    const list = await cli('--url', url, 'webhooks');
    expect(list.code, list.err).toBe(0);
    expect(list.out).toMatch(
      new RegExp(
        `^${endpoint!.id}\\s+https://hooks\\.example\\.com/crm\\s+\\S+\\s+integration\\.switched_off,brownout\\.ended\\s+active\\s`,
        'm',
      ),
    );
  });

  it('pause, resume, ping and delete through both of the commands’ backends, audited under each one’s actor', async () => {
    const [endpoint] = await stored();
    const id = endpoint!.id;
    const ctx = { store: gw.store, rules: gw.rules } as unknown as Context;
    const onDatabase = databaseWebhooks(ctx, 'cli:tester', () => []);
    const overApi = apiWebhooks(adminClient(url, { token: ADMIN_TOKEN, variable: 'LEAD_GATEWAY_ADMIN_TOKEN' }));

    expect((await overApi.change(id, { paused: true })).paused).toBe(true);
    expect((await onDatabase.change(id, { paused: false })).paused).toBe(false);
    const ping = await overApi.ping(id);
    expect((await onDatabase.deliveries(id, { limit: 10 })).items.map((d) => d.event_id)).toContain(ping.event_id);
    expect(await overApi.list({ limit: 10 })).toEqual(await onDatabase.list({ limit: 10 }));
    await overApi.remove(id);
    expect(await stored()).toEqual([]);
    expect((await auditOf(id)).slice(-4)).toEqual([
      'webhook_endpoint_changed by automation',
      'webhook_endpoint_changed by cli:tester',
      'webhook_ping_sent by automation',
      'webhook_endpoint_deleted by automation',
    ]);
  });
});
