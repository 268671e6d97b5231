// What the store's units of work alone cost: the gateway's built submission and answers services
// called in one process on a fresh SQLite file at synchronous=FULL, without HTTP, routing, request
// validation, logging or the reply's JSON. A reference of bench/run.ts, measured in each round beside
// the echo, so that a path's CPU can be read against its write unit on the same machine in the same
// minutes (the new lead's target was set as 1.1 × (a write unit + an echo), docs/performance.md).
//
//   node --import tsx bench/store-unit.ts <database-file> [--units 10000] [--warmup 1000] [--replayed 1000]
//                                         [--run unit] [--from 0] [--source]
//
// Three phases of `units` units each, CONCURRENCY of them in flight at a time (so the store commits
// them in groups, as it does a gateway's requests): new leads (a new person each, after `warmup` more
// that are not measured), replays of the first `replayed` measured new leads, answers about those
// persons. Each unit checks that it did what its phase says. It prints one JSON line: the CPU of this
// process per unit of each phase (process.cpuUsage: every thread, as the bench counts a gateway's).
// --source runs the TypeScript sources instead of the build (the test of this reference does). --run
// names the events and external ids and --from numbers the first lead (its phone too), so that a second
// run on a file filled by a first one stores new persons: the units with that many leads stored.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { bodyOf } from './load.js';
import { ROOT } from '../test/support/child-gateway.js';
import { BENCH_INTEGRATION, answersTemplate, leadTemplate } from './templates.js';

const { values: options, positionals } = parseArgs({
  options: {
    units: { type: 'string', default: '10000' },
    warmup: { type: 'string', default: '1000' },
    replayed: { type: 'string', default: '1000' },
    run: { type: 'string', default: 'unit' },
    from: { type: 'string', default: '0' },
    source: { type: 'boolean', default: false },
  },
  allowPositionals: true,
});
const path = positionals[0];
if (!path) {
  console.error(
    'usage: store-unit.ts <database-file> [--units 10000] [--warmup 1000] [--replayed 1000] [--run unit] [--from 0] [--source]',
  );
  process.exit(2);
}
const units = Number(options.units);
const from = Number(options.from);
/** New leads before the first measured one; how many measured leads the replays and answers go to. */
const WARMUP = Number(options.warmup);
const REPLAYED = Math.min(Number(options.replayed), units);

// The build the gateway runs (npm run bench builds it first), typed by its sources.
const built = (module: string): Promise<unknown> =>
  import(
    pathToFileURL(options.source ? join(ROOT, 'src', module.replace(/\.js$/, '.ts')) : join(ROOT, 'dist', module)).href
  );
const { openStore } = (await built('store/open-store.js')) as typeof import('../src/store/open-store.js');
const { createRulesHolder } = (await built('rules/loader.js')) as typeof import('../src/rules/loader.js');
const { submitLead } = (await built('intake/service.js')) as typeof import('../src/intake/service.js');
const { submitAnswers } = (await built('answers/service.js')) as typeof import('../src/answers/service.js');
const { LeadSubmissionSchema } = (await built('intake/schemas.js')) as typeof import('../src/intake/schemas.js');
const { AnswersSubmissionSchema } = (await built('answers/schemas.js')) as typeof import('../src/answers/schemas.js');

/** Units in flight at once: a group the size the gateway's groups have at 32 connections (docs/performance.md). */
const CONCURRENCY = 20;

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
const leads = Array.from({ length: WARMUP + units }, (_, i) =>
  LeadSubmissionSchema.parse(JSON.parse(bodyOf(leadTemplate(options.run), from + i))),
);
// Their events numbered from `from` too: a second run of the same name on the file makes new ones.
const answers = Array.from({ length: units }, (_, i) =>
  AnswersSubmissionSchema.parse(
    JSON.parse(bodyOf(answersTemplate(options.run, REPLAYED, from + WARMUP, `${options.run}-${from}-answers`), i)),
  ),
);

/** A unit that must have done what its phase says, or its figure would measure something else. */
const must = (done: boolean, what: string) => {
  if (!done) throw new Error(`store-unit: ${what}`);
};
/** The person of each new lead, by its number: the replays and answers must reach the same ones. */
const persons: string[] = [];
const submit = async (i: number) => {
  const reply = await submitLead(deps, integration, leads[i]!);
  must(reply.status === 201 && reply.body.intake_outcome === 'created', `lead ${i} was not a new person's new lead`);
  persons[i] = reply.body.contact_id;
};

await phase(WARMUP, 0, submit);
const newLead = await phase(units, WARMUP, submit);
// The first REPLAYED measured leads again, the same objects: every one a replay of that lead.
const replay = await phase(units, 0, async (i) => {
  const n = WARMUP + (i % REPLAYED);
  const reply = await submitLead(deps, integration, leads[n]!);
  must(reply.body.replayed && reply.body.contact_id === persons[n], `lead ${n} sent again was not its replay`);
});
const answered = await phase(units, 0, async (i) => {
  const reply = await submitAnswers(deps, integration, answers[i]!);
  must(
    !reply.replayed && reply.answers.written.length > 0 && reply.contact_id === persons[WARMUP + (i % REPLAYED)],
    `answers ${i} did not write to lead ${WARMUP + (i % REPLAYED)}'s person`,
  );
});
await store.close();
console.log(
  JSON.stringify({
    units,
    concurrency: CONCURRENCY,
    new_lead_cpu_us: newLead,
    replay_cpu_us: replay,
    answers_cpu_us: answered,
  }),
);
