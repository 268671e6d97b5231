// The secrets check that every test gateway runs at close (helper.ts) finds a raw key wherever it lands:
// so the whole test run, which closes dozens of gateways, is a search for leaked keys.
import { describe, expect, it } from 'vitest';
import { startGateway } from './helper.js';

describe('the secrets check at close', () => {
  it('passes for a gateway that used its keys the normal way', async () => {
    const gw = await startGateway();
    const key = await gw.issueKey('brightpath:telegram-bot');
    expect((await gw.submit(key, { event_id: 's-1', first_name: 'Clean' })).statusCode).toBe(201);
    expect((await gw.submit(`${key}x`, { event_id: 's-2', first_name: 'Wrong key' })).statusCode).toBe(401);
    await expect(gw.close()).resolves.toBeUndefined();
  });

  it('fails when a key reaches the database (here: sent as a lead note)', async () => {
    const gw = await startGateway();
    const key = await gw.issueKey('brightpath:telegram-bot');
    await gw.submit(key, { event_id: 's-3', first_name: 'Leaky', notes: `my key is ${key}` });
    await expect(gw.close()).rejects.toThrow(/a raw secret was stored or logged: .*(gateway\.db|database-dump\.txt)/);
  });

  it('fails when a key reaches the log', async () => {
    const gw = await startGateway();
    const key = await gw.issueKey('brightpath:telegram-bot');
    gw.app.log.info({ note: key }, 'a careless line');
    await expect(gw.close()).rejects.toThrow(/a raw secret was stored or logged: .*gateway\.log/);
  });
});
