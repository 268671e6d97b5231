// The Webhooks pages of the console: the secret shown once, each workspace owner held to their own
// workspace's endpoints, bad input shown on the form with nothing stored, every action audited under the
// signed-in person's name, and a receiver's answer shown as text in the delivery log.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../helper.js';
import { addUser, consoleClient, type ConsoleClient } from '../support/console.js';
import { claimDue, recordAttempt } from '../../src/webhooks/outbox.js';
import { ANSWER_HEAD_SHOWN } from '../../src/console/webhooks.js';

const LIST = '/console/webhooks';
const URL_OK = 'https://hooks.example.com/console';
/** The service team's endpoint for every workspace: an address no owner's endpoint begins with. */
const TEAM_URL = 'https://team.example.org/every-workspace';

let gw: Gateway;
let team: ConsoleClient;
let owner: ConsoleClient;
let otherOwner: ConsoleClient;
let brightpathId: string;
beforeAll(async () => {
  gw = await startGateway({ console: { secureCookies: false } });
  await addUser(gw, 'team-hooks');
  await addUser(gw, 'owner-hooks', 'brightpath');
  await addUser(gw, 'dental-hooks', 'smile-dental');
  team = consoleClient(gw.app, { gw });
  owner = consoleClient(gw.app, { gw });
  otherOwner = consoleClient(gw.app, { gw });
  expect((await team.signIn('team-hooks')).statusCode).toBe(303);
  expect((await owner.signIn('owner-hooks')).statusCode).toBe(303);
  expect((await otherOwner.signIn('dental-hooks')).statusCode).toBe(303);
  brightpathId = [...gw.rules.current().workspaces.values()].find((w) => w.slug === 'brightpath')!.id;
});
afterAll(() => gw.close());

/** Every stored endpoint, as the repository reads it (the gateway holds at most 100). */
const rows = () => gw.store.readOne((r) => r.webhooks.listEndpoints(null, 100));
const secretOf = (html: string) => /id="webhook-secret"[^>]*value="([^"]+)"/.exec(html)?.[1] ?? null;
const idOf = (html: string) => /href="\/console\/webhooks\/([^"?]+)">I have stored it/.exec(html)?.[1] ?? null;
const auditOf = async (id: string) =>
  (await gw.admin('GET', '/admin/v1/audit?limit=500'))
    .json<{ items: { integration_id: string; action: string; actor: string }[] }>()
    .items.filter((e) => e.integration_id === id)
    .map((e) => `${e.action} by ${e.actor}`)
    .reverse();

/** Adds an endpoint through the form; answers the page and the new endpoint's id. */
async function add(client: ConsoleClient, fields: Record<string, string>) {
  const res = await client.post(LIST, fields, LIST);
  return { res, id: idOf(res.body) };
}

describe('the Webhooks page', () => {
  it('is linked from the navigation, and shows a new endpoint’s secret once, on the form’s answer only', async () => {
    expect((await team.get('/console/integrations')).body).toContain('<a href="/console/webhooks">Webhooks</a>');
    const { res, id } = await add(team, {
      url: TEAM_URL,
      'type.integration.switched_off': 'on',
      'type.brownout.ended': 'on',
      description: 'CRM alerts',
    });
    expect(res.statusCode).toBe(201);
    expect(res.body).toContain('data-testid="secret-warning"');
    expect(res.body).toContain('it is shown on this page only, never again');
    const secret = secretOf(res.body)!;
    expect(secret).toMatch(/^whsec_/);
    const row = (await rows()).find((r) => r.id === id)!;
    expect(row).toMatchObject({ url: TEAM_URL, workspaceId: null, secret });

    const page = await team.get(`${LIST}/${id}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(TEAM_URL);
    expect(page.body).not.toContain(secret);
    const list = await team.get(LIST);
    expect(list.body).toContain(`data-endpoint="${id}"`);
    expect(list.body).not.toContain(secret);
    expect(await auditOf(id!)).toEqual(['webhook_endpoint_created by team-hooks']);
  });

  it('holds a workspace owner to their own workspace’s endpoints, and refuses one who is not signed in', async () => {
    const { res, id } = await add(owner, { url: `${URL_OK}/brightpath`, 'type.lead.needs_review': 'on' });
    expect(res.statusCode).toBe(201);
    expect((await rows()).find((r) => r.id === id)!.workspaceId).toBe(brightpathId);
    const teamWide = (await rows()).find((r) => r.workspaceId === null)!;

    // The owner sees their endpoint, and not the one for every workspace (its URL is the service team's).
    const mine = await owner.get(LIST);
    expect(mine.body).toContain(`data-endpoint="${id}"`);
    expect(mine.body).not.toContain(teamWide.url);
    expect((await owner.get(`${LIST}/${teamWide.id}`)).statusCode).toBe(404);

    // Another workspace's owner neither sees nor acts on it: the 404 an endpoint that does not exist gets.
    expect((await otherOwner.get(LIST)).body).not.toContain(id!);
    expect((await otherOwner.get(`${LIST}/${id}`)).statusCode).toBe(404);
    const before = await rows();
    for (const action of ['pause', 'ping', 'rotate', 'delete'])
      expect((await otherOwner.post(`${LIST}/${id}/${action}`, { confirm: 'yes' }, LIST)).statusCode).toBe(404);
    expect(await rows()).toEqual(before);
    expect(await auditOf(id!)).toEqual(['webhook_endpoint_created by owner-hooks']);

    // An owner cannot add one for another workspace, or for every workspace.
    const smile = [...gw.rules.current().workspaces.values()].find((w) => w.slug === 'smile-dental')!;
    const elsewhere = await owner.post(
      LIST,
      { url: URL_OK, 'type.lead.needs_review': 'on', workspace: smile.id },
      LIST,
    );
    expect(elsewhere.statusCode).toBe(403);
    expect(await rows()).toEqual(before);

    // Without a session the form is refused, and the page leads to the sign-in form.
    const nobody = consoleClient(gw.app, { gw });
    const refused = await nobody.post(LIST, { url: URL_OK, 'type.lead.needs_review': 'on' }, '/console/sign-in');
    expect(refused.statusCode).toBe(401);
    expect((await nobody.get(LIST)).headers.location).toBe('/console/sign-in');
    // Nor is a signed-in person's form taken without its CSRF token.
    expect((await team.post(LIST, { url: URL_OK, 'type.lead.needs_review': 'on' }, null)).statusCode).toBe(403);
    expect(await rows()).toEqual(before);
  });

  it('shows bad input as a form error on the page, keeps what was typed, and stores nothing', async () => {
    const before = await rows();
    const cases: [Record<string, string>, string][] = [
      [{ url: 'http://hooks.example.com/x', 'type.lead.needs_review': 'on' }, 'must use https'],
      [{ url: URL_OK, 'type.lead.nothing_such': 'on' }, 'unknown event types: lead.nothing_such'],
      [{ url: URL_OK, 'type.ping': 'on' }, 'unknown event types: ping'],
      [{ url: URL_OK }, 'choose at least one event type'],
      [{ url: 'not a url', 'type.lead.needs_review': 'on' }, 'is not an absolute URL'],
    ];
    for (const [fields, words] of cases) {
      const res = await team.post(LIST, fields, LIST);
      expect(res.statusCode, words).toBe(422);
      expect(/data-testid="form-error">([^<]*)</.exec(res.body)?.[1]).toContain(words);
      expect(res.body).toContain(`value="${fields.url}"`);
    }
    expect(await rows()).toEqual(before);
  });
});

describe('an endpoint’s page', () => {
  it('pauses, resumes, pings, rotates and deletes, each audited under the signed-in person', async () => {
    const { id } = await add(owner, { url: `${URL_OK}/life`, 'type.brownout.started': 'on' });
    const page = `${LIST}/${id}`;
    const state = async () => /data-testid="endpoint-state">([^<]*)</.exec((await owner.get(page)).body)?.[1];
    expect(await state()).toBe('active');
    expect((await owner.post(`${page}/pause`, {}, page)).statusCode).toBe(303);
    expect(await state()).toMatch(/^paused/);
    expect((await owner.post(`${page}/resume`, {}, page)).statusCode).toBe(303);
    expect(await state()).toBe('active');

    expect((await owner.post(`${page}/ping`, {}, page)).statusCode).toBe(303);
    expect((await owner.get(page)).body).toMatch(/data-col="status">pending</);

    const old = (await rows()).find((r) => r.id === id)!.secret;
    const rotated = await owner.post(`${page}/rotate`, {}, page);
    expect(rotated.statusCode).toBe(200);
    const fresh = secretOf(rotated.body)!;
    expect(fresh).toMatch(/^whsec_/);
    expect(fresh).not.toBe(old);
    expect((await rows()).find((r) => r.id === id)!.secret).toBe(fresh);
    expect((await owner.get(page)).body).not.toContain(fresh);

    // Deleting asks first; only the confirmed form deletes.
    const asked = await owner.post(`${page}/delete`, {}, page);
    expect(asked.statusCode).toBe(200);
    expect(asked.body).toContain('data-testid="confirm"');
    expect((await rows()).some((r) => r.id === id)).toBe(true);
    const deleted = await owner.post(`${page}/delete`, { confirm: 'yes' }, page);
    expect(deleted.statusCode).toBe(303);
    expect(deleted.headers.location).toBe(LIST);
    expect((await rows()).some((r) => r.id === id)).toBe(false);
    expect((await owner.get(page)).statusCode).toBe(404);

    expect(await auditOf(id!)).toEqual([
      'webhook_endpoint_created by owner-hooks',
      'webhook_endpoint_changed by owner-hooks',
      'webhook_endpoint_changed by owner-hooks',
      'webhook_ping_sent by owner-hooks',
      'webhook_secret_rotated by owner-hooks',
      'webhook_endpoint_deleted by owner-hooks',
    ]);
  });

  it('shows the receiver’s answer escaped in the delivery log, and resends a delivery of its own only', async () => {
    const { id } = await add(team, { url: `${URL_OK}/log`, 'type.brownout.ended': 'on' });
    const page = `${LIST}/${id}`;
    expect((await team.post(`${page}/ping`, {}, page)).statusCode).toBe(303);
    const claimed = (await claimDue(gw.store, 50, 'console-test', 30_000)).find((c) => c.delivery.endpointId === id)!;
    const answer = '<script>alert("x")</script><b>refused</b>';
    const attempt = {
      deliveryId: claimed.delivery.id,
      at: new Date().toISOString(),
      statusCode: 418,
      durationMs: 37,
      responseHead: `${answer}${'x'.repeat(400)}`,
      error: null,
    };
    expect(await recordAttempt(gw.store, attempt, { status: 'failed' }, 'console-test')).toBe(true);

    const body = (await team.get(page)).body;
    const row = body.slice(body.indexOf(`data-delivery="${claimed.delivery.id}"`));
    expect(row).toMatch(/data-col="status">failed</);
    expect(row).toContain('37 ms');
    expect(row).toContain('>418<');
    expect(body).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;b&gt;refused&lt;/b&gt;');
    expect(body).not.toContain('<script>alert');
    // The first ANSWER_HEAD_SHOWN characters of what the receiver said, no more.
    const shown = 'x'.repeat(ANSWER_HEAD_SHOWN - answer.length);
    expect(body).toContain(`refused&lt;/b&gt;${shown}</code>`);

    // An event this endpoint was never sent is not sent to it from here.
    const stranger = await team.post(`${page}/resend`, { event: 'msg_not_this_endpoints' }, page);
    expect(stranger.statusCode).toBe(404);
    expect((await team.post(`${page}/resend`, { event: claimed.event.id }, page)).statusCode).toBe(303);
    expect((await team.get(page)).body).toMatch(/data-col="status">pending</);
    expect((await auditOf(id!)).at(-1)).toBe('webhook_event_resent by team-hooks');
  });
});
