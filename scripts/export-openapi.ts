// Writes the OpenAPI document of the gateway (example rules, throw-away database) to a file.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../src/app.js';
import { openSqliteStore } from '../src/db/sqlite-store.js';
import { createRulesHolder } from '../src/rules/loader.js';

const out = process.argv[2] ?? 'openapi.json';
const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-openapi-'));
const app = await buildApp(
  { adminToken: 'openapi-export-token-000000000000' },
  { store: openSqliteStore({ path: join(dir, 'g.db'), synchronous: 'OFF' }), rules: createRulesHolder('rules') },
);
await app.ready();
writeFileSync(out, `${JSON.stringify(app.swagger(), null, 2)}\n`);
await app.close();
rmSync(dir, { recursive: true, force: true });
console.log(`OpenAPI document written to ${out}`);
