// Concurrent duplicates over a real listening server: exactly one lead and one submission, never a 5xx.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../helper.js';

interface LeadReply {
  replayed: boolean;
  contact_id: string;
  submission_id: string;
  lead: { id: string };
}

let gw: Gateway;
let base: string;
let key: string;

beforeAll(async () => {
  gw = await startGateway();
  key = await gw.issueKey('brightpath:telegram-bot');
  base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(() => gw.close());

const post = (body: unknown) =>
  fetch(`${base}/api/integrations/v1/leads/`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

describe('concurrent requests with one event_id', () => {
  it('50 at once: one lead, one submission, one 201 and 49 replays of it', async () => {
    const body = {
      event_id: 'burst-1',
      external_contact_id: 'telegram:burst-1',
      first_name: 'Akmal',
      phone: '+998935550001',
    };
    const replies = await Promise.all(Array.from({ length: 50 }, () => post(body)));
    const bodies = (await Promise.all(replies.map((r) => r.json()))) as LeadReply[];
    const statuses = replies.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(49);
    expect(bodies.filter((b) => b.replayed === true)).toHaveLength(49);
    expect(new Set(bodies.map((b) => b.lead.id)).size).toBe(1);
    expect(new Set(bodies.map((b) => b.submission_id)).size).toBe(1);
    expect(await gw.inspect.submissions.count({ eventId: 'burst-1' })).toBe(1);
    expect(await gw.inspect.leads.count({ contactId: bodies[0]!.contact_id })).toBe(1);
  });

  it('with different data at once: one wins, the rest are replays or 409s, never a 5xx', async () => {
    const replies = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        post({ event_id: 'burst-2', first_name: i % 2 === 0 ? 'Botir' : 'Bobur', phone: '+998935550002' }),
      ),
    );
    const statuses = replies.map((r) => r.status);
    expect(statuses.every((s) => s === 200 || s === 201 || s === 409)).toBe(true);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(15);
    expect(await gw.inspect.submissions.count({ eventId: 'burst-2' })).toBe(1);
    expect(await gw.inspect.leads.count({ phone: '+998935550002' })).toBe(1);
  });

  it('many distinct events at once are all stored, each answered after its commit', async () => {
    const replies = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        post({ event_id: `burst-3-${i}`, external_contact_id: `telegram:b3-${i}`, first_name: 'Dono' }),
      ),
    );
    expect(replies.map((r) => r.status)).toEqual(Array(60).fill(201));
    expect(await gw.inspect.submissions.count({ eventId: { like: 'burst-3-%' } })).toBe(60);
  });
});
