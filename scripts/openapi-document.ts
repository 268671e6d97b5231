// The OpenAPI document of the gateway on the example rules (throw-away database): what GET
// /openapi.json serves, built without a server or a prior build.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../src/app.js';
import type { UpstreamConfig } from '../src/config.js';
import { openStore } from '../src/store/open-store.js';
import { createRulesHolder } from '../src/rules/loader.js';

/** Without an upstream (the published document), or with one: its legacy reads and actions are then forwarded. */
export async function gatewayOpenApi(
  rulesDir = 'rules',
  options: { upstream?: UpstreamConfig } = {},
): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-openapi-'));
  try {
    const app = await buildApp(
      { adminToken: 'openapi-export-token-000000000000', ...options },
      {
        store: await openStore({ engine: 'sqlite', path: join(dir, 'g.db'), synchronous: 'OFF' }),
        rules: createRulesHolder(rulesDir),
      },
    );
    await app.ready();
    const doc = app.swagger() as unknown as Record<string, unknown>;
    await app.close();
    return doc;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
