// Writes the OpenAPI document of the gateway (example rules, throw-away database) to a file.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { gatewayOpenApi } from './openapi-document.js';

const out = process.argv[2] ?? 'openapi.json';
const doc = await gatewayOpenApi();
// No build needed first: the folder (dist/ for lint:openapi) is made when missing.
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify(doc, null, 2)}\n`);
console.log(`OpenAPI document written to ${out}`);
