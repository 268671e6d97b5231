// What the store's units of work alone cost: the gateway's built submission and answers services
// called in one process on a fresh SQLite file at synchronous=FULL, without HTTP, routing, request
// validation, logging or the reply's JSON. A reference of bench/run.ts, measured in each round beside
// the echo, so that a path's CPU can be read against its write unit on the same machine in the same
// minutes (the new lead's target of 260 µs was set as 1.1 × (a write unit of ~190 µs + an echo of ~46)).
//
//   node --import tsx bench/store-unit.ts <database-file> [--units 10000] [--run unit] [--from 0] [--source]
//
// Three phases, each `units` units after a warm-up, CONCURRENCY of them in flight at a time (so the
// store commits them in groups, as it does a gateway's requests): new leads (a new person each), replays
// of the first 1,000 measured new leads, answers about those persons. It prints one JSON line: the CPU
// of this process per unit of each phase (process.cpuUsage: every thread, as the bench counts a gateway's).
// --source runs the TypeScript sources instead of the build (the test of this reference does). --run
// names the events and external ids and --from numbers the first lead (its phone too), so that a second
// run on a file filled by a first one stores new persons: the units with that many leads stored.
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { bodyOf } from './load.js';
import { ROOT } from '../test/support/child-gateway.js';
import { BENCH_INTEGRATION, answersTemplate, leadTemplate } from './templates.js';

const { values: options, positionals } = parseArgs({ options: { units: { type: 'string', default: '10000' }, run: { type: 'string', default: 'unit' }, from: { type: 'string', default: '0' }, source: { type: 'boolean', default: false } }, allowPositionals: true });
const path = positionals[0];
if (!path) {
  console.error('usage: store-unit.ts <database-file> [--units 10000] [--run unit] [--from 0] [--source]');
  process.exit(2);
}
const units = Number(options.units);
const from = Number(options.from);

// The build the gateway runs (npm run bench builds it first), typed by its sources.
const built = (module: string): Promise<unknown> => import(options.source ? join(ROOT, 'src', module.replace(/\.js$/, '.ts')) : join(ROOT, 'dist', module));
const { openStore } = (await built('store/open-store.js')) as typeof import('../src/store/open-store.js');
const { createRulesHolder } = (await built('rules/loader.js')) as typeof import('../src/rules/loader.js');
const { submitLead } = (await built('intake/service.js')) as typeof import('../src/intake/service.js');
const { submitAnswers } = (await built('answers/service.js')) as typeof import('../src/answers/service.js');
const { LeadSubmissionSchema } = (await built('intake/schemas.js')) as typeof import('../src/intake/schemas.js');
const { AnswersSubmissionSchema } = (await built('answers/schemas.js')) as typeof import('../src/answers/schemas.js');

/** Units in flight at once: a group the size the gateway's groups have at 32 connections (docs/performance.md). */
const CONCURRENCY = 20;
/** New leads before the first measured one, and how many measured leads the replays and answers go to. */
const WARMUP = Math.min(1_000, units);
const REPLAYED = Math.min(1_000, units);

const store = await openStore({ engine: 'sqlite', path, synchronous: 'FULL' });
const integration = createRulesHolder(join(ROOT, 'rules')).current().findIntegration(BENCH_INTEGRATION);
if (!integration) throw new Error(`the example rules have no integration ${BENCH_INTEGRATION}`);
const deps = { store };

/** Runs `count` units numbered from `first`, CONCURRENCY at a time; the CPU µs per unit. */
async function phase(count: number, first: number, unit: (i: number) => Promise<unknown>): Promise<number> {
  const before = process.cpuUsage();
  let next = first;
  const end = first + count;
  const lane = async () => {
    while (next < end) await unit(next++);
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, lane));
  const used = process.cpuUsage(before);
  return Math.round(((used.user + used.system) / count) * 10) / 10;
}

// The bodies as the route hands them over, parsed before any phase so that no zod parse is measured.
const leads = Array.from({ length: WARMUP + units }, (_, i) => LeadSubmissionSchema.parse(JSON.parse(bodyOf(leadTemplate(options.run), from + i))));
const answers = Array.from({ length: units }, (_, i) => AnswersSubmissionSchema.parse(JSON.parse(bodyOf(answersTemplate(options.run, REPLAYED, from + WARMUP, `${options.run}-answers`), i))));

/** A unit that must have done what its phase says, or its figure would measure something else. */
const expect = (done: boolean, what: string) => {
  if (!done) throw new Error(`store-unit: ${what}`);
};
const submit = async (i: number) => {
  const reply = await submitLead(deps, integration, leads[i]!);
  expect(reply.status === 201 && reply.body.intake_outcome === 'created', `lead ${i} was not a new person's new lead`);
};

await phase(WARMUP, 0, submit);
const newLead = await phase(units, WARMUP, submit);
// The first REPLAYED measured leads again, the same objects: every one a replay.
const replay = await phase(units, 0, async (i) => {
  const reply = await submitLead(deps, integration, leads[WARMUP + (i % REPLAYED)]!);
  expect(reply.body.replayed, `lead ${WARMUP + (i % REPLAYED)} sent again was not replayed`);
});
const answered = await phase(units, 0, async (i) => {
  const reply = await submitAnswers(deps, integration, answers[i]!);
  expect(!reply.replayed && reply.answers.written.length > 0, `answers ${i} wrote nothing`);
});
await store.close();
console.log(JSON.stringify({ units, concurrency: CONCURRENCY, new_lead_cpu_us: newLead, replay_cpu_us: replay, answers_cpu_us: answered }));
