// vitest globalSetup: test gateways record their responses (test/helper.ts); once every test file has
// run, each recorded response is checked against the OpenAPI document. A failure fails `npm test`.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { checkRecorded, gatewayDocument, type RecordedResponse } from './contract.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The folder the test gateways write their responses to (one file per worker process). */
    contractResponsesDir: string;
  }
}

/** How many failures are printed; the rest are counted. */
const SHOWN = 20;

export default function setup(project: TestProject) {
  const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-responses-'));
  project.provide('contractResponsesDir', dir);
  return async () => {
    const started = performance.now();
    const records: RecordedResponse[] = [];
    for (const file of readdirSync(dir)) {
      for (const line of readFileSync(join(dir, file), 'utf8').split('\n'))
        if (line !== '') records.push(JSON.parse(line) as RecordedResponse);
    }
    rmSync(dir, { recursive: true, force: true });
    if (records.length === 0) return;
    const rules = join(import.meta.dirname, '..', '..', 'rules');
    const docs = {
      local: await gatewayDocument(rules),
      upstream: records.some((r) => r.upstream) ? await gatewayDocument(rules, { upstream: true }) : undefined,
    };
    const failures = checkRecorded(docs, records);
    const ms = Math.round(performance.now() - started);
    if (failures.length === 0) {
      console.log(`contract: ${records.length} responses of the test gateways fit the OpenAPI document (${ms} ms)`);
      return;
    }
    console.error(
      [
        `contract: ${failures.length} kind(s) of response break the OpenAPI document:`,
        ...failures.slice(0, SHOWN).map((f) => `  - ${f}`),
        ...(failures.length > SHOWN ? [`  ... and ${failures.length - SHOWN} more`] : []),
      ].join('\n'),
    );
    // A teardown's exception is only printed by vitest; the exit code is what fails the run.
    process.exitCode = 1;
  };
}
