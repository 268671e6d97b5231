// Writes the OpenAPI document of the gateway (example rules, throw-away database) to a file.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
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
// No build needed first: the folder (dist/ for lint:openapi) is made when missing.
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify(app.swagger(), null, 2)}\n`);
await app.close();
rmSync(dir, { recursive: true, force: true });
console.log(`OpenAPI document written to ${out}`);
