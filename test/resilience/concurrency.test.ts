// Many clients at once, with overlapping event_ids and persons, over real HTTP: one lead per person,
// one ledger row per event, every accepted answer stored exactly once, never a 5xx.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../helper.js';
import { FULL, reportFigures, scale } from './scale.js';

let gw: Gateway;
let base: string;
let key: string;

beforeAll(async () => {
  gw = await startGateway({ rateLimitPerMinute: 1_000_000 });
  key = await gw.issueKey('brightpath:telegram-bot');
  base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(() => gw.close());

/** A small seeded generator: the same run every time, so a failure can be replayed. */
function random(seed: number) {
  let s = seed >>> 0;
  return (n: number) => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s % n;
  };
}

// Bodies are a function of the event_id alone: two clients sending one event send the same bytes.
const leadEvent = (person: number, k: number) => ({
  path: '/api/integrations/v1/leads/',
  body: {
    event_id: `lead-${person}-${k}`,
    external_contact_id: `person:${person}`,
    first_name: `Person ${person}`,
    answers: { goal: `goal ${person}.${k}` },
  },
});
const answerEvent = (person: number, k: number) => ({
  path: '/api/integrations/v1/leads/answers/',
  body: {
    event_id: `answer-${person}-${k}`,
    external_contact_id: `person:${person}`,
    answers: { age: 20 + k, laptop: k % 2 ? 'ha' : "yo'q" },
  },
});

describe('overlapping clients', () => {
  it('keep one lead per person and account for every answer', async () => {
    const statuses = new Map<number, number>();
    const acceptedLeadEvents = new Set<string>();
    const acceptedAnswerEvents = new Set<string>();
    const personsWithLead = new Set<number>();
    const leadOfPerson = new Map<number, Set<string>>();
    const unexpected: string[] = [];

    const client = async (c: number) => {
      const pick = random(c + 1);
      for (let i = 0; i < scale.concurrencyEvents; i++) {
        const person = pick(scale.concurrencyPersons);
        const k = pick(3); // few events per person, so clients collide on the same event_ids
        const event = pick(3) === 0 ? answerEvent(person, k) : leadEvent(person, k);
        const res = await fetch(`${base}${event.path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify(event.body),
        });
        const body = (await res.json()) as {
          lead?: { id: string };
          lead_id?: string;
          replayed?: boolean;
          type?: string;
        };
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (res.status >= 500) unexpected.push(`${event.body.event_id}: ${res.status} ${JSON.stringify(body)}`);
        if (res.status < 300) {
          const leadId = body.lead?.id ?? body.lead_id!;
          if (!leadOfPerson.has(person)) leadOfPerson.set(person, new Set());
          leadOfPerson.get(person)!.add(leadId);
          if (event.path.endsWith('/answers/')) acceptedAnswerEvents.add(event.body.event_id);
          else {
            acceptedLeadEvents.add(event.body.event_id);
            personsWithLead.add(person);
          }
        } else if (!(res.status === 404 && event.path.endsWith('/answers/'))) {
          // The only refusal expected: answers about a person whose first lead has not arrived yet.
          unexpected.push(`${event.body.event_id}: ${res.status} ${JSON.stringify(body)}`);
        }
      }
    };
    await Promise.all(Array.from({ length: scale.concurrencyClients }, (_, c) => client(c)));

    const leads = await gw.inspect.leads.count();
    const ledgerLeads = await gw.inspect.submissions.count({ endpoint: 'leads' });
    const ledgerAnswers = await gw.inspect.submissions.count({ endpoint: 'answers' });
    const answerRows = await gw.inspect.answers.count({ submissionEndpoint: 'answers' });
    reportFigures(`concurrency (${FULL ? 'full' : 'quick'})`, {
      clients: scale.concurrencyClients,
      requests: [...statuses.values()].reduce((a, b) => a + b, 0),
      statuses: [...statuses].map(([s, n]) => `${s}:${n}`).join(','),
      persons: personsWithLead.size,
      leads,
      lead_events: acceptedLeadEvents.size,
      answer_events: acceptedAnswerEvents.size,
      answers_stored: answerRows,
    });
    expect(unexpected).toEqual([]);
    expect(leads).toBe(personsWithLead.size);
    // Every reply about a person named the same lead.
    expect([...leadOfPerson.values()].every((ids) => ids.size === 1)).toBe(true);
    expect(ledgerLeads).toBe(acceptedLeadEvents.size);
    expect(ledgerAnswers).toBe(acceptedAnswerEvents.size);
    // Two answers per answers event, each stored once, whether the event was sent once or ten times.
    expect(answerRows).toBe(2 * acceptedAnswerEvents.size);
  }, 120_000);
});
