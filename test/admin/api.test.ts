// The admin API: its token, keys shown once and stored only hashed, operator actions, rules reload.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startGateway, type Gateway } from '../helper.js';

let gw: Gateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(() => gw.close());

describe('admin authentication', () => {
  it('refuses a missing token, a wrong token and an integration key', async () => {
    const key = await gw.issueKey('brightpath:telegram-bot');
    for (const authorization of [undefined, 'Bearer wrong-token', `Bearer ${key}`, ADMIN_TOKEN]) {
      const res = await gw.app.inject({
        method: 'GET',
        url: '/admin/v1/integrations',
        headers: authorization ? { authorization } : {},
      });
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
    }
  });

  it('guards the rules and replicas routes too', async () => {
    for (const [method, url] of [
      ['GET', '/admin/v1/rules'],
      ['POST', '/admin/v1/rules/reload'],
      ['GET', '/admin/v1/replicas'],
    ] as const) {
      expect((await gw.app.inject({ method, url })).statusCode).toBe(401);
      expect((await gw.app.inject({ method, url, headers: { authorization: 'Bearer wrong-token' } })).statusCode).toBe(
        401,
      );
    }
  });

  it('an admin token is not an integration key', async () => {
    const res = await gw.app.inject({
      method: 'POST',
      url: '/api/integrations/v1/leads/',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { event_id: 'x', first_name: 'A' },
    });
    expect(res.statusCode).toBe(401);
  });
});

describe('keys', () => {
  it('issues a key shown once, lists it by prefix only, and stores only its hash', async () => {
    const issued = await gw.admin('POST', '/admin/v1/integrations/brightpath:website-form/keys');
    expect(issued.statusCode).toBe(201);
    const { key, prefix, id } = issued.json();
    expect(key).toMatch(/^lgv1_[A-Za-z0-9_-]{32}$/);
    expect(key.startsWith(prefix)).toBe(true);
    const listed = await gw.admin('GET', '/admin/v1/integrations/brightpath:website-form/keys');
    expect(listed.json().items).toContainEqual(expect.objectContaining({ id, prefix, kind: 'v1', revoked_at: null }));
    expect(listed.body).not.toContain(key);
    const files = ['gateway.db', 'gateway.db-wal'].map((f) => {
      try {
        return readFileSync(join(gw.dir, f)).toString('latin1');
      } catch {
        return '';
      }
    });
    expect(files.join('')).not.toContain(key);
    const works = await gw.submit(key, { event_id: 'k1', first_name: 'Ali' });
    expect(works.statusCode).toBe(201);
  });

  it('answers 404 for an unknown integration', async () => {
    const res = await gw.admin('POST', '/admin/v1/integrations/brightpath:nope/keys');
    expect(res.statusCode).toBe(404);
    expect(res.json().detail).toContain('brightpath:nope');
  });

  it('lists integrations with their ids and handles', async () => {
    const res = (await gw.admin('GET', '/admin/v1/integrations')).json();
    expect(res.items.map((i: { handle: string }) => i.handle).sort()).toEqual([
      'brightpath:telegram-bot',
      'brightpath:website-form',
      'smile-dental:booking-form',
    ]);
  });
});

describe('operator actions', () => {
  it('refuses a stage of another workspace and a lead that does not exist', async () => {
    const key = await gw.issueKey('smile-dental:booking-form');
    const lead = (await gw.submit(key, { event_id: 'op-1', first_name: 'Sabina' })).json().lead;
    const brightpathStage = (
      await gw.submit(await gw.issueKey('brightpath:telegram-bot'), { event_id: 'op-2', first_name: 'X' })
    ).json().lead.stage;
    const res = await gw.admin('POST', `/admin/v1/leads/${lead.id}/move`, { stage: brightpathStage });
    expect(res.statusCode).toBe(422);
    expect((await gw.admin('GET', `/admin/v1/leads/${lead.id}`)).json().stage).toBe(lead.stage);
    expect((await gw.admin('POST', '/admin/v1/leads/00000000-0000-4000-8000-000000000000/reopen')).statusCode).toBe(
      404,
    );
  });
});

describe('control characters in printed free text', () => {
  it('a reason with a line break or an escape sequence is refused with 422 and a path; nothing is audited or changed', async () => {
    const handle = 'brightpath:website-form';
    const audit = async () =>
      (await gw.admin('GET', `/admin/v1/integrations/${handle}/audit`)).json<{ items: unknown[] }>().items;
    const before = await audit();
    for (const reason of ['ok\n2026-11-26T00:00:00Z  forged  rollback', 'colour \u001b[2J', 'c1 \u0085']) {
      for (const [url, body] of [
        [`/admin/v1/integrations/${handle}/keys`, { reason }],
        [`/admin/v1/integrations/${handle}/rollback`, { reason }],
        [`/admin/v1/integrations/${handle}/switch-off`, { reason, force: true }],
      ] as const) {
        const res = await gw.admin('POST', url, body);
        expect({ url, status: res.statusCode }).toEqual({ url, status: 422 });
        expect(res.json()).toMatchObject({
          code: 'validation-failed',
          errors: [{ path: '/reason', message: expect.stringContaining('control characters') }],
        });
      }
    }
    expect(await audit()).toEqual(before);
    const key = await gw.issueKey('smile-dental:booking-form');
    const lead = (await gw.submit(key, { event_id: 'ctl-1', first_name: 'Lola' })).json().lead;
    const closed = await gw.admin('POST', `/admin/v1/leads/${lead.id}/close`, { reason: 'a\rb' });
    expect(closed.statusCode).toBe(422);
    expect((await gw.admin('GET', `/admin/v1/leads/${lead.id}`)).json().closed_at).toBeNull();
  });
});
