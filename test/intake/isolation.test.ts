// Tenancy: a key of one workspace can neither match nor see a person of another.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../helper.js';

let gw: Gateway;
let brightpath: string;
let website: string;
let dental: string;

beforeAll(async () => {
  gw = await startGateway();
  brightpath = await gw.issueKey('brightpath:telegram-bot');
  website = await gw.issueKey('brightpath:website-form');
  dental = await gw.issueKey('smile-dental:booking-form');
});
afterAll(() => gw.close());

describe('workspace isolation', () => {
  it('the same phone, e-mail and external id in another workspace is another person', async () => {
    const person = {
      external_contact_id: 'telegram:777',
      first_name: 'Nigora',
      phone: '+998907770000',
      email: 'nigora@example.com',
      notes: 'private note',
    };
    const a = (await gw.submit(brightpath, { event_id: 'iso-1', ...person })).json();
    const res = await gw.submit(dental, { event_id: 'iso-1', ...person, notes: undefined });
    expect(res.statusCode).toBe(201);
    const b = res.json();
    expect(b).toMatchObject({ matched_existing: false, matched_by: null, replayed: false });
    expect(b.contact_id).not.toBe(a.contact_id);
    expect(b.lead.id).not.toBe(a.lead.id);
    expect(JSON.stringify(b)).not.toContain('private note');
    expect(b.lead.assigned_to_detail.username).toBe('aziz');
    expect(await gw.inspect.contacts.count({ phone: '+998907770000' })).toBe(2);
  });

  it('event_ids are per integration: the same event_id elsewhere is not a replay', async () => {
    await gw.submit(brightpath, { event_id: 'iso-2', first_name: 'Olim' });
    const res = await gw.submit(dental, { event_id: 'iso-2', first_name: 'Other person' });
    expect(res.statusCode).toBe(201);
    expect(res.json().replayed).toBe(false);
  });

  it('external_contact_id bindings belong to one integration; the same workspace still matches by phone', async () => {
    const first = (
      await gw.submit(brightpath, {
        event_id: 'iso-3',
        external_contact_id: 'shared:1',
        first_name: 'Qodir',
        phone: '+998907770003',
      })
    ).json();
    const noPhone = (
      await gw.submit(website, { event_id: 'iso-3', external_contact_id: 'shared:1', first_name: 'Qodir' })
    ).json();
    expect(noPhone.matched_by).toBeNull();
    expect(noPhone.contact_id).not.toBe(first.contact_id);
    const byPhone = (
      await gw.submit(website, { event_id: 'iso-4', first_name: 'Qodir', phone: '+998907770003' })
    ).json();
    expect(byPhone).toMatchObject({ matched_by: 'phone', contact_id: first.contact_id });
  });
});
