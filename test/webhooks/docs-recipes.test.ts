// The verification recipes of docs/operations/webhooks.md, run as a receiver would run them, against
// webhooks signed by the gateway; and the bounds that page states, held against the code.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fencedBlocks } from '../docs/doc-commands.js';
import { ROOT } from '../support/child-gateway.js';
import { runOwned } from '../support/owned.js';
import { BASE_DELAY_MS, MAX_ATTEMPTS, MAX_DELAY_MS } from '../../src/webhooks/backoff.js';
import { BODY_HEAD_BYTES, BODY_READ_MAX_BYTES, DELIVERY_TIMEOUT_MS } from '../../src/webhooks/deliver.js';
import { SECRET_BYTES, newSecret, webhookHeaders } from '../../src/webhooks/signing.js';

const page = readFileSync(join(ROOT, 'docs/operations/webhooks.md'), 'utf8');
const blocks = fencedBlocks(page);
const nodeRecipe = blocks.find((b) => b.lang === 'js')!.body;
const pythonRecipe = blocks.find((b) => b.lang === 'python' && b.body.includes('hmac.new'))!.body;

const [current, next] = [newSecret(), newSecret()];
const now = () => Math.floor(Date.now() / 1000);
const body = JSON.stringify({ type: 'lead.created', data: { name: 'Zoë' } });
const fresh = () => ({ id: 'msg_docs', timestampSeconds: now(), body });

/** The cases every recipe must decide alike: genuine ones accepted, the others refused. */
const cases = () => [
  { name: 'genuine', secret: current, headers: webhookHeaders([current], fresh()), body, genuine: true },
  {
    name: 'tampered',
    secret: current,
    headers: webhookHeaders([current], fresh()),
    body: body.replace('Zoë', 'Zoe'),
    genuine: false,
  },
  { name: 'other secret', secret: newSecret(), headers: webhookHeaders([current], fresh()), body, genuine: false },
  {
    name: 'ten minutes old',
    secret: current,
    headers: webhookHeaders([current], { ...fresh(), timestampSeconds: now() - 600 }),
    body,
    genuine: false,
  },
  {
    name: 'rotation, old secret',
    secret: current,
    headers: webhookHeaders([current, next], fresh()),
    body,
    genuine: true,
  },
  {
    name: 'rotation, new secret',
    secret: next,
    headers: webhookHeaders([current, next], fresh()),
    body,
    genuine: true,
  },
];

const hasPython = spawnSync('python3', ['--version'], { timeout: 10_000 }).status === 0;
if (!hasPython && process.env.CI) throw new Error('the Python recipe needs python3 in CI');

describe('the verification recipes of docs/operations/webhooks.md', () => {
  it('in Node.js accept the genuine webhooks, refuse the others, and answer the event', async () => {
    // The recipe as a receiver's module, its secret from the environment, and one verification after it.
    const program = `${nodeRecipe}
try { console.log(JSON.stringify(verifiedEvent(...JSON.parse(process.argv[1])))); } catch (e) { console.log(e.name); }`;
    const all = cases();
    const runs = await Promise.all(
      all.map((c) =>
        runOwned(process.execPath, ['--input-type=module', '-e', program, JSON.stringify([c.body, c.headers])], {
          cwd: ROOT,
          env: { ...process.env, LEAD_GATEWAY_WEBHOOK_SECRET: c.secret },
          timeoutMs: 15_000,
        }),
      ),
    );
    expect(runs.map((r) => r.stderr)).toEqual(all.map(() => ''));
    expect(runs.map((r) => r.stdout.trim())).toEqual(
      all.map((c) => (c.genuine ? JSON.stringify(JSON.parse(body)) : 'WebhookVerificationError')),
    );
  });

  it.skipIf(!hasPython)('in Python, by hand, accept the genuine webhooks and refuse the others', async () => {
    const program = `${pythonRecipe}

import json, sys
for c in json.loads(sys.argv[1]):
    print(verify(c["secret"], c["headers"], c["body"].encode()))
`;
    const all = cases();
    const run = await runOwned('python3', ['-c', program, JSON.stringify(all)], { timeoutMs: 15_000 });
    expect(run.stderr).toBe('');
    expect(run.stdout.trim().split('\n')).toEqual(all.map((c) => (c.genuine ? 'True' : 'False')));
  });
});

describe('the bounds docs/operations/webhooks.md states', () => {
  it('are those of the code', () => {
    const prose = page.replace(/\s+/g, ' ');
    expect(prose).toContain(`the base64 of ${SECRET_BYTES} random bytes`);
    expect(prose).toContain(
      `An attempt has one deadline, ${DELIVERY_TIMEOUT_MS / 1000} seconds (\`DELIVERY_TIMEOUT_MS\``,
    );
    expect(prose).toContain(`The first ${BODY_HEAD_BYTES / 1024} KiB of the body (\`BODY_HEAD_BYTES\`)`);
    expect(prose).toContain(`at most ${BODY_READ_MAX_BYTES / 1024} KiB is read (\`BODY_READ_MAX_BYTES\`)`);
    expect(prose).toContain(
      `the ceiling is ${BASE_DELAY_MS / 60_000} minute after the first attempt (\`BASE_DELAY_MS\``,
    );
    expect(prose).toContain(`stops growing at ${MAX_DELAY_MS / 3_600_000} hours (\`MAX_DELAY_MS\`)`);
    expect(prose).toContain(`An event gets ${MAX_ATTEMPTS} attempts in all (\`MAX_ATTEMPTS\`)`);
    expect(prose).toContain(`| ${MAX_ATTEMPTS} | none: the event is given up |`);
  });
});
