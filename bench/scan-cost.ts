// The CPU of the body scan against JSON.parse, per body, on the bodies that bound a request's cost:
// a lead of the usual size, and 1 MiB of many small members or of long strings. `npx tsx bench/scan-cost.ts`
import { scanJson } from '../src/http/json-body.js';
import { ANSWERS_COUNTED } from '../src/answers/schemas.js';
import { LeadSubmissionSchema } from '../src/intake/schemas.js';

// The lead of the API's own example (its OpenAPI document shows it): a usual body.
const lead = JSON.stringify((LeadSubmissionSchema.meta() as { examples: unknown[] }).examples[0]);
const manyKeys = JSON.stringify({
  event_id: 'x',
  external_contact_id: 'telegram:1',
  answers: Object.fromEntries(Array.from({ length: 90_000 }, (_, i) => [`k${i}`, 'x'])),
});
const longStrings = JSON.stringify({ event_id: 'x', pads: Array.from({ length: 16 }, () => 'x'.repeat(65_000)) });

/** Microseconds of this process's CPU per call, over enough calls to last ~1 s. */
function cost(fn: () => unknown): number {
  let n = 1;
  for (;;) {
    const start = process.cpuUsage();
    for (let i = 0; i < n; i++) fn();
    const used = process.cpuUsage(start);
    const us = used.user + used.system;
    if (us > 1_000_000) return us / n;
    n *= 2;
  }
}

const unlimited = { maxValues: Infinity, maxStringChars: Infinity };
const rows: [string, string, number, number, number][] = [];
for (const [name, text] of [
  ['lead (usual)', lead],
  ['90,000 answer keys', manyKeys],
  ['16 strings of 65,000', longStrings],
] as const) {
  rows.push([
    name,
    `${text.length}`,
    cost(() => JSON.parse(text)),
    cost(() => scanJson(text, unlimited)),
    cost(() => scanJson(text, { counted: [ANSWERS_COUNTED] })),
  ]);
}
console.log('| body | chars | JSON.parse µs | scan, whole text µs | scan, answers counted µs |');
console.log('|---|---:|---:|---:|---:|');
for (const [name, chars, parse, scan, stopped] of rows)
  console.log(`| ${name} | ${chars} | ${parse.toFixed(1)} | ${scan.toFixed(1)} | ${stopped.toFixed(1)} |`);
