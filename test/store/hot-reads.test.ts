// Keys and migration states are remembered per store (store/hot-reads.ts), yet every change applies to
// the next request: made through the gateway, or committed by another process such as the CLI.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { stableId } from '../../src/rules/ids.js';
import { createRulesHolder } from '../../src/rules/loader.js';
import type { Store } from '../../src/store/store.js';
import { ADMIN_TOKEN, EXAMPLE_RULES, recordForContract, startGateway, type Gateway } from '../helper.js';
import { openTestStore, testEngine } from '../support/store.js';

// These write the file as another process would, bypassing the gateway. On PostgreSQL another
// process's change arrives through the change feed, which the process making it waits for
// (test/process/replicas-changes.test.ts, test/store/postgres/change-feed.test.ts).
const byAnotherProcess = it.runIf(testEngine() === 'sqlite');

let gw: Gateway;
const LEGACY = 'hot-reads-legacy-key-0123456789';
const integrationId = stableId('brightpath', 'integration', 'telegram-bot');

beforeAll(async () => {
  gw = await startGateway();
  await gw.admin('POST', '/admin/v1/integrations/brightpath:telegram-bot/keys/import', { key: LEGACY });
});
afterAll(() => gw.close());

/** Another process's connection to the same file, as the CLI has. */
function elsewhere(sql: string, ...params: unknown[]): void {
  const other = new Database(join(gw.dir, 'gateway.db'));
  other.prepare(sql).run(...params);
  other.close();
}

const legacyCall = () =>
  gw.app.inject({ method: 'GET', url: '/api/bots/api/info/', headers: { 'x-bot-api-key': LEGACY } });
let n = 0;
const lead = (key: string) => gw.submit(key, { event_id: `hot-${n++}`, first_name: 'Hot' });

describe('remembered keys and states', () => {
  it('a renewal through the admin API stops the old key on the very next request', async () => {
    const old = await gw.issueKey('brightpath:website-form');
    expect((await lead(old)).statusCode).toBe(201);
    const renewed = await gw.admin('POST', '/admin/v1/integrations/brightpath:website-form/keys/renew', {
      reason: 'test',
    });
    expect(renewed.statusCode).toBe(201);
    expect((await lead(old)).statusCode).toBe(401);
    expect((await lead(renewed.json().key)).statusCode).toBe(201);
  });

  byAnotherProcess('a key revoked by another process stops on the next request', async () => {
    const key = await gw.issueKey('smile-dental:booking-form');
    expect((await lead(key)).statusCode).toBe(201);
    expect((await lead(key)).statusCode).toBe(201); // remembered now
    elsewhere("UPDATE api_keys SET revoked_at = '2026-01-01T00:00:00Z' WHERE revoked_at IS NULL AND kind = 'v1'");
    expect((await lead(key)).statusCode).toBe(401);
  });

  byAnotherProcess('a legacy key revoked by another process stops on the next request', async () => {
    const key = 'hot-reads-revoked-legacy-key-0123';
    await gw.admin('POST', '/admin/v1/integrations/smile-dental:booking-form/keys/import', { key });
    const call = () => gw.app.inject({ method: 'GET', url: '/api/bots/api/info/', headers: { 'x-bot-api-key': key } });
    expect((await call()).statusCode).toBe(200);
    expect((await call()).statusCode).toBe(200); // remembered now
    elsewhere(
      "UPDATE api_keys SET revoked_at = '2026-01-01T00:00:00Z' WHERE revoked_at IS NULL AND kind = 'legacy' AND integration_id = ?",
      stableId('smile-dental', 'integration', 'booking-form'),
    );
    expect((await call()).statusCode).toBe(401);
  });

  byAnotherProcess(
    'a switch-off by another process answers 403 on the next request, and so does a rollback through the admin API',
    async () => {
      expect((await legacyCall()).statusCode).toBe(200);
      expect((await legacyCall()).statusCode).toBe(200);
      elsewhere(
        "INSERT OR REPLACE INTO integration_states (integration_id, state, updated_at) VALUES (?, 'switched_off', 't')",
        integrationId,
      );
      expect((await legacyCall()).statusCode).toBe(403);

      const back = await gw.admin('POST', '/admin/v1/integrations/brightpath:telegram-bot/rollback', {
        reason: 'bot not ready',
      });
      expect(back.statusCode).toBe(200);
      expect((await legacyCall()).statusCode).toBe(200);
    },
  );
});

describe('the check for changes by another process', () => {
  it('is made once for a legacy call whose key and state are remembered (on SQLite it is a statement)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-hot-checks-'));
    const store = await openTestStore(dir);
    let checks = 0;
    const counted = new Proxy(store, {
      get: (target, name) =>
        name === 'changeGeneration'
          ? () => {
              checks++;
              return target.changeGeneration();
            }
          : (Reflect.get(target, name) as unknown),
    }) as Store;
    const app = await buildApp(
      { adminToken: ADMIN_TOKEN },
      { store: counted, rules: createRulesHolder(EXAMPLE_RULES) },
    );
    recordForContract(app);
    try {
      const imported = await app.inject({
        method: 'POST',
        url: '/admin/v1/integrations/brightpath:telegram-bot/keys/import',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        payload: { key: LEGACY },
      });
      expect(imported.statusCode).toBe(201);
      const call = () =>
        app.inject({ method: 'GET', url: '/api/bots/api/info/', headers: { 'x-bot-api-key': LEGACY } });
      expect((await call()).statusCode).toBe(200);
      checks = 0;
      expect((await call()).statusCode).toBe(200);
      expect(checks).toBe(1);
    } finally {
      await app.close();
    }
  });
});
