// The request bodies the benchmarks send, as templates of bench/load.ts: `{i}` is the request's number,
// `{i%n+k}` its number modulo n plus k. One place, so that the bench, its A/B runs and its references
// send the same leads.
import { MEASURED_OFFSET } from './measure.js';

/** The integration of the example rules every benchmark submits as. */
export const BENCH_INTEGRATION = 'brightpath:telegram-bot';

/** Which number a request's lead has: its own (`{i}`), or one of `every` numbers from `from`. */
export interface Numbering {
  every?: number;
  from?: number;
}

const numbered = ({ every, from = 0 }: Numbering, add = 0) =>
  `{i${every ? `%${every}` : ''}${from + add > 0 ? `+${from + add}` : ''}}`;

/**
 * The lead a new bot sends: a new person for each number (a phone of its own); `run` keeps event_ids
 * apart between scenarios on one database. With `every`, the same `every` leads over and over.
 */
export const leadTemplate = (run: string, numbering: Numbering = {}) =>
  JSON.stringify({
    event_id: `${run}-${numbered(numbering)}`,
    external_contact_id: `telegram:${run}-${numbered(numbering)}`,
    first_name: 'Bench',
    last_name: `Person ${numbered(numbering)}`,
    phone: `+9989${numbered(numbering, 10_000_000)}`,
    metadata: { source_key: 'ig_spring' },
    answers: { course: 'python', age: 27 },
  });

/** A measured scenario's first `stored` leads again, body for body (the load numbers them from MEASURED_OFFSET). */
export const replayTemplate = (run: string, stored: number) =>
  leadTemplate(run, { every: stored, from: MEASURED_OFFSET });

/** What a legacy bot POSTs to leads/: a new person each (a phone of its own), a Telegram id as a number. */
export const legacyLeadTemplate = () =>
  JSON.stringify({
    first_name: 'Legacy',
    phone: '+99891{i+10000000}',
    source: 'ig_spring',
    extra_data: { telegram_id: '{i+500000}', course: 'python' },
  }).replace('"{i+500000}"', '{i+500000}');

/**
 * Answers about the persons of the first `stored` leads of `run` numbered from `from`, each with an
 * event of its own, named `events`-{i}.
 */
export const answersTemplate = (run: string, stored: number, from = MEASURED_OFFSET, events = 'answers') =>
  JSON.stringify({
    event_id: `${events}-{i}`,
    external_contact_id: `telegram:${run}-${numbered({ every: stored, from })}`,
    answers: { laptop: "{i%2:yo'q|ha}", goal: 'goal {i}' },
  });
