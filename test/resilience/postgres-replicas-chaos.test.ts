// Three gateway replicas on one PostgreSQL database, under chaos: clients send new leads and answers
// round-robin across the replicas, with persons and event_ids that overlap between clients and
// replicas, and resend whatever got no answer or a 503 to the next replica until it is acknowledged.
// Meanwhile one replica is SIGKILLed and restarted again and again, and PostgreSQL is stopped and
// started once. Afterwards no acknowledged event may be missing, no event or person may be doubled,
// every resend of an acknowledged event must be a replay naming the same lead, and no answer may be a
// 5xx other than the 503 the contract gives while the database is away (docs/reliability.md,
// "Three replicas, killed and restarted").
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHILD_ADMIN_TOKEN, spawnGateway, type ChildGateway } from '../support/child-gateway.js';
import { clusterOrSkip, freshDatabase, type TestPostgres } from '../support/postgres.js';
import { openStore } from '../../src/store/open-store.js';
import { inspect } from '../support/inspect.js';
import { FULL, reportFigures, scale } from './scale.js';
import { goalRules } from '../support/goal-rules.js';

const REPLICAS = 3;
/** The replica that is killed and restarted; the others run throughout. */
const VICTIM = REPLICAS - 1;
const CLIENTS = 6;
/** Every request has a client timeout: an answer must come well inside it (the pool's bounds are 5-6 s). */
const CLIENT_TIMEOUT_MS = 15_000;
/** Requests a client sends at most, resends included (a bound on the whole run, whatever the timings). */
const MAX_REQUESTS_PER_CLIENT = FULL ? 8_000 : 2_000;
/** Sends of one event at most before the test gives up on it (and fails). */
const MAX_SENDS_PER_EVENT = 100;
/** A client's pause after a request, so the load leaves the cores room for the restarts. */
const CLIENT_PAUSE_MS = 2;
/** A client's pause before a resend: shorter than Retry-After (1 s), to keep pressing on an outage. */
const RESEND_PAUSE_MS = 50;
/** New-lead events per person, taken one after the other by different clients, so they race. */
const EVENTS_PER_PERSON = 3;
/** Every so many persons one is known only by phone; the others by external_contact_id. */
const PHONE_ONLY_EVERY = 4;
/** Share of new events that another client sends too, at once, to another replica. */
const DUPLICATE_SHARE = 0.25;
/** Share of acknowledged events that a client sends again later, to another replica. */
const ACK_RESEND_SHARE = 0.05;
/** Share of persons known by external_contact_id who get an answers event once their lead is acknowledged. */
const ANSWERS_SHARE = 0.5;
/** The victim runs this long (at random) between its restart and its next kill, and stays dead up to this. */
const RUN_BETWEEN_KILLS_MS: [number, number] = [400, 2_500];
const DEAD_AT_MOST_MS = 400;
/** How long PostgreSQL stays stopped. */
const OUTAGE_MS = 1_500;
/**
 * A 503 is allowed when its request overlapped the outage: from `pg_ctl stop` until this long after
 * `pg_ctl start` returned. After the start a pooled connection broken by the stop may still be handed
 * out once (its failure is seen on use), and the restart test saw the first 201 20-300 ms after it.
 */
const AFTER_OUTAGE_MS = 3_000;
/** Load before the first kill and after the last restart. */
const STEADY_MS = 1_000;

const RULES = goalRules('chaos', ['bot']);
const rulesDir = mkdtempSync(join(tmpdir(), 'lead-gateway-chaos-'));
writeFileSync(join(rulesDir, 'chaos.yaml'), RULES);

let cluster: TestPostgres | null = null;
let url: string;
let env: Record<string, string>;
const replicas: ChildGateway[] = [];
let key: string;

beforeAll(async () => {
  cluster = await clusterOrSkip({ own: true });
  if (!cluster?.server) return;
  url = await freshDatabase(cluster.url);
  env = { DATABASE_URL: url, ADMIN_TOKEN: CHILD_ADMIN_TOKEN, RULES_DIR: rulesDir, RATE_LIMIT_PER_MINUTE: '1000000' };
  replicas.push(...(await Promise.all(Array.from({ length: REPLICAS }, () => spawnGateway({ env })))));
  const res = await fetch(`${replicas[0]!.address}/admin/v1/integrations/chaos:bot/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${CHILD_ADMIN_TOKEN}` },
  });
  if (res.status !== 201) throw new Error(`issuing a key: ${res.status} ${await res.text()}`);
  key = ((await res.json()) as { key: string }).key;
}, 90_000);

afterAll(async () => {
  await Promise.all(replicas.map((g) => g.stop()));
  await cluster?.stop();
  rmSync(rulesDir, { recursive: true, force: true });
});

const now = () => performance.now();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const between = ([low, high]: [number, number]) => low + Math.random() * (high - low);

interface Event {
  endpoint: 'leads' | 'answers';
  eventId: string;
  person: number;
  body: Record<string, unknown>;
  /** When the first acknowledgement arrived, and the lead it named. */
  ackedAt?: number;
  leadId?: string;
}

interface Sent {
  event: Event;
  replica: number;
  why: 'new' | 'duplicate' | 'resend' | 'acknowledged-resend' | 'final-check';
  start: number;
  end: number;
  /** 0: no answer (the connection failed, or the client timeout). */
  status: number;
  retryAfter: string | null;
  contentType: string | null;
  body: Record<string, unknown> | null;
  error?: string;
}

const path = (event: Event) =>
  event.endpoint === 'leads' ? '/api/integrations/v1/leads/' : '/api/integrations/v1/leads/answers/';
const leadOf = (s: Sent) =>
  s.event.endpoint === 'leads' ? (s.body?.lead as { id?: string } | null)?.id : (s.body?.lead_id as string | undefined);
const acknowledged = (s: Sent) => s.status === 201 || s.status === 200;
const groupBy = <T>(xs: readonly T[], keyOf: (x: T) => string): Map<string, T[]> => {
  const groups = new Map<string, T[]>();
  for (const x of xs) {
    const key = keyOf(x);
    const group = groups.get(key);
    if (group) group.push(x);
    else groups.set(key, [x]);
  }
  return groups;
};

async function send(replica: number, event: Event, why: Sent['why']): Promise<Sent> {
  const start = now();
  try {
    const res = await fetch(`${replicas[replica]!.address}${path(event)}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(event.body),
      signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
    });
    const text = await res.text();
    return {
      event,
      replica,
      why,
      start,
      end: now(),
      status: res.status,
      retryAfter: res.headers.get('retry-after'),
      contentType: res.headers.get('content-type'),
      body: text ? JSON.parse(text) : null,
    };
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    return {
      event,
      replica,
      why,
      start,
      end: now(),
      status: 0,
      retryAfter: null,
      contentType: null,
      body: null,
      error: `${(error as Error).name}${cause ? ` ${cause}` : ''}`,
    };
  }
}

/** What is wrong with a 503, or null when it is the contract's: a problem with a whole-second Retry-After. */
function bad503(s: Sent): string | null {
  const ok =
    /^\d+$/.test(s.retryAfter ?? '') &&
    s.contentType?.startsWith('application/problem+json') &&
    s.body?.type === 'urn:lead-gateway:problem:service-unavailable' &&
    s.body?.status === 503 &&
    s.body?.code === 'service-unavailable' &&
    typeof s.body?.detail === 'string' &&
    typeof s.body?.request_id === 'string';
  return ok
    ? null
    : `${s.event.eventId} via ${s.replica}: 503 retry-after=${s.retryAfter} ${s.contentType} ${JSON.stringify(s.body)}`;
}

describe(`${REPLICAS} replicas on one PostgreSQL, one killed and restarted, the server restarted`, () => {
  it(
    'lose no acknowledged event, double no lead or person, replay every resend, and answer 5xx only with 503 while the server is away',
    async (context) => {
      if (!cluster?.server) return context.skip();
      const server = cluster.server;
      const tag = `c${Date.now().toString(36)}`;
      const person = (p: number) => ({
        name: `${tag}-p${p}`,
        phoneOnly: p % PHONE_ONLY_EVERY === PHONE_ONLY_EVERY - 1,
      });
      const phoneOf = (p: number) => `+99893${String(1_000_000 + p).slice(-7)}`;

      const sent: Sent[] = [];
      const events = new Map<string, Event>();
      /** Sends waiting for a client: duplicates at the front (they go at once), later resends at the back. */
      const queue: { event: Event; why: Sent['why']; avoid: number }[] = [];
      const answersQueued = new Set<number>();
      const unfinished: string[] = [];
      const unexpected: string[] = [];
      const requests = Array.from({ length: CLIENTS }, () => 0);
      let nextEvent = 0;
      let stopped = false;
      const outage = { downStart: Infinity, upDone: Infinity };
      const victim = { kills: 0, starts: [] as number[], deadMs: [] as number[] };

      const record = (event: Event) => {
        events.set(`${event.endpoint}:${event.eventId}`, event);
        return event;
      };
      const newLeadEvent = (): Event => {
        const n = nextEvent++;
        const p = Math.floor(n / EVENTS_PER_PERSON);
        const { name, phoneOnly } = person(p);
        const body = {
          event_id: `${tag}-e${n}`,
          first_name: name,
          ...(phoneOnly ? { phone: phoneOf(p) } : { external_contact_id: `ext:${name}` }),
        };
        return record({ endpoint: 'leads', eventId: body.event_id, person: p, body });
      };
      const onAck = (s: Sent) => {
        const { event } = s;
        if (event.ackedAt === undefined) {
          event.ackedAt = s.end;
          event.leadId = leadOf(s);
        }
        if (s.why === 'acknowledged-resend' || s.why === 'final-check') return;
        if (Math.random() < ACK_RESEND_SHARE) queue.push({ event, why: 'acknowledged-resend', avoid: s.replica });
        const p = event.person;
        if (
          event.endpoint === 'leads' &&
          !person(p).phoneOnly &&
          !answersQueued.has(p) &&
          Math.random() < ANSWERS_SHARE
        ) {
          answersQueued.add(p);
          const name = person(p).name;
          const answers = record({
            endpoint: 'answers',
            eventId: `${tag}-a${p}`,
            person: p,
            body: {
              event_id: `${tag}-a${p}`,
              external_contact_id: `ext:${name}`,
              answers: { goal: `goal of ${name}` },
            },
          });
          queue.push({ event: answers, why: 'new', avoid: -1 });
          if (Math.random() < DUPLICATE_SHARE) queue.push({ event: answers, why: 'duplicate', avoid: -1 });
        }
      };

      /** Sends an event until it is acknowledged, each resend to the next replica. */
      const deliver = async (c: number, cursor: { at: number }, event: Event, why: Sent['why'], avoid: number) => {
        if (cursor.at % REPLICAS === avoid) cursor.at++;
        for (let sends = 0; ; sends++) {
          if (sends >= MAX_SENDS_PER_EVENT || requests[c]! >= MAX_REQUESTS_PER_CLIENT) {
            unfinished.push(`${event.endpoint}:${event.eventId} after ${sends} sends`);
            return;
          }
          requests[c]!++;
          const s = await send(cursor.at++ % REPLICAS, event, sends === 0 ? why : 'resend');
          sent.push(s);
          if (acknowledged(s)) return onAck(s);
          if (s.status !== 0 && s.status !== 503) {
            unexpected.push(
              `${event.endpoint}:${event.eventId} via ${s.replica}: ${s.status} ${JSON.stringify(s.body)}`,
            );
            return;
          }
          await sleep(RESEND_PAUSE_MS);
        }
      };
      const client = async (c: number) => {
        const cursor = { at: c };
        for (;;) {
          const job =
            queue.shift() ?? (stopped ? undefined : { event: newLeadEvent(), why: 'new' as const, avoid: -1 });
          if (!job) return;
          if (requests[c]! >= MAX_REQUESTS_PER_CLIENT)
            return void unfinished.push(`${job.event.endpoint}:${job.event.eventId}: client ${c} at its request cap`);
          if (job.why === 'new' && job.event.endpoint === 'leads' && Math.random() < DUPLICATE_SHARE) {
            // The same event at once through another client, to another replica than this one's.
            queue.unshift({ event: job.event, why: 'duplicate', avoid: cursor.at % REPLICAS });
          }
          await deliver(c, cursor, job.event, job.why, job.avoid);
          await sleep(CLIENT_PAUSE_MS);
        }
      };

      const restartPostgres = async () => {
        outage.downStart = now();
        await server.down();
        await sleep(OUTAGE_MS);
        await server.up();
        outage.upDone = now();
      };
      /** Restarts the victim on its port; should another process have taken the port meanwhile, on a new one. */
      const restartVictim = async () => {
        const port = new URL(replicas[VICTIM]!.address).port;
        replicas[VICTIM] = await spawnGateway({ env: { ...env, PORT: port } }).catch(() => spawnGateway({ env }));
      };
      const chaos = async () => {
        await sleep(STEADY_MS);
        const postgresAfter = Math.floor(scale.chaosKills / 2);
        for (let k = 0; k < scale.chaosKills; k++) {
          if (k === postgresAfter) await restartPostgres();
          await sleep(between(RUN_BETWEEN_KILLS_MS));
          const killed = now();
          replicas[VICTIM]!.child.kill('SIGKILL');
          await replicas[VICTIM]!.exited;
          victim.kills++;
          await sleep(Math.random() * DEAD_AT_MOST_MS);
          const starting = now();
          await restartVictim();
          victim.starts.push(now() - starting);
          victim.deadMs.push(now() - killed);
        }
        await sleep(STEADY_MS);
      };

      const started = now();
      const clients = Array.from({ length: CLIENTS }, (_, c) => client(c));
      try {
        await chaos();
      } finally {
        stopped = true;
        await Promise.all(clients);
      }
      const duration = now() - started;

      // By the API: every acknowledged event once more, now that every replica runs, to a replica
      // round-robin; each must be a replay of the lead first named.
      const checks = [...events.values()].filter((e) => e.ackedAt !== undefined);
      const final: Sent[] = [];
      await Promise.all(
        Array.from({ length: CLIENTS }, async (_, c) => {
          for (let i = c; i < checks.length; i += CLIENTS)
            final.push(await send(i % REPLICAS, checks[i]!, 'final-check'));
        }),
      );

      // From the database, through the inspector of a store opened on it.
      const store = await openStore({ engine: 'postgres', url, poolSize: 2 });
      let submissions: Record<string, unknown>[];
      let leads: Record<string, unknown>[];
      let contacts: Record<string, unknown>[];
      try {
        const db = inspect(store);
        submissions = await db.submissions.list({ eventId: { like: `${tag}-%` } }, ['endpoint', 'eventId', 'leadId']);
        leads = await db.leads.list({ firstName: { like: `${tag}-%` } }, ['firstName', 'id']);
        contacts = await db.contacts.list({ firstName: { like: `${tag}-%` } }, ['firstName', 'id']);
      } finally {
        await store.close();
      }

      // Every answer: 201 a new lead, 200 attached or a replay, 503 the contract's problem while the
      // server was away; no answer only from the victim, never a client timeout.
      const all = [...sent, ...final];
      const answers503 = sent.filter((s) => s.status === 503);
      const outsideOutage = answers503.filter(
        (s) => s.end < outage.downStart || s.start > outage.upDone + AFTER_OUTAGE_MS,
      );
      const noAnswer = sent.filter((s) => s.status === 0);
      const wrongAck = all.filter(acknowledged).filter((s) => {
        const replayed = s.body?.replayed === true;
        if (s.event.endpoint === 'answers') return s.status !== 200 || typeof s.body?.lead_id !== 'string';
        if (s.status === 201) return replayed || s.body?.intake_outcome !== 'created';
        return !replayed && s.body?.intake_outcome !== 'attached';
      });
      // Per event: one lead named by every acknowledgement, at most one of them not a replay, and every
      // send that started after the first acknowledgement a replay.
      const byEvent = groupBy(all.filter(acknowledged), (s) => `${s.event.endpoint}:${s.event.eventId}`);
      const doubledEvents: string[] = [];
      const notReplayed: string[] = [];
      for (const [id, acks] of byEvent) {
        const first = events.get(id)!;
        if (new Set(acks.map(leadOf)).size !== 1 || acks.filter((s) => s.body?.replayed !== true).length > 1)
          doubledEvents.push(`${id}: ${acks.map((s) => `${s.status}/${s.body?.replayed}/${leadOf(s)}`).join(' ')}`);
        for (const s of acks)
          if (s.start > first.ackedAt! && (s.status !== 200 || s.body?.replayed !== true || leadOf(s) !== first.leadId))
            notReplayed.push(`${id} (${s.why}): ${s.status} ${JSON.stringify(s.body)}`);
      }

      // The database: every acknowledged event stored once with the lead it was answered with; one
      // lead and one contact per person, and every event of a person on that one lead.
      const stored = new Map(
        submissions.map((r) => [`${String(r.endpoint)}:${String(r.eventId)}`, r.leadId as string]),
      );
      const ackedEvents = [...events.values()].filter((e) => e.ackedAt !== undefined);
      const lost = ackedEvents
        .filter((e) => stored.get(`${e.endpoint}:${e.eventId}`) !== e.leadId)
        .map((e) => `${e.endpoint}:${e.eventId}`);
      const persons = new Set([...events.values()].map((e) => e.person));
      const leadsOf = groupBy(leads, (r) => r.firstName as string);
      const contactsOf = groupBy(contacts, (r) => r.firstName as string);
      const doubledPersons = [...persons]
        .map((p) => person(p).name)
        .filter((name) => leadsOf.get(name)?.length !== 1 || contactsOf.get(name)?.length !== 1);
      const leadIdOf = new Map(leads.map((r) => [r.firstName as string, r.id as string]));
      const elsewhere = ackedEvents
        .filter((e) => e.leadId !== leadIdOf.get(person(e.person).name))
        .map((e) => `${e.endpoint}:${e.eventId}`);

      const foundCommitted = [...byEvent.values()]
        .filter(
          (acks) =>
            acks[0]!.why === 'resend' &&
            acks[0]!.body?.replayed === true &&
            !acks.some((s) => s.start < acks[0]!.start),
        )
        .map((acks) =>
          sent.filter((s) => s.event === acks[0]!.event && s.end <= acks[0]!.start).at(-1)?.status === 503
            ? 'after_503'
            : 'after_no_answer',
        );
      const count = (xs: Sent[], f: (s: Sent) => boolean) => xs.filter(f).length;
      const ms = (x: number) => Math.round(x);
      reportFigures(`postgres replicas under chaos (${FULL ? 'full' : 'quick'})`, {
        replicas: REPLICAS,
        clients: CLIENTS,
        duration_s: (duration / 1000).toFixed(1),
        requests: sent.length,
        events: events.size,
        persons: persons.size,
        answers_events: [...events.values()].filter((e) => e.endpoint === 'answers').length,
        acks: count(sent, acknowledged),
        created_201: count(sent, (s) => s.status === 201),
        duplicates_sent: count(sent, (s) => s.why === 'duplicate'),
        resends: count(sent, (s) => s.why === 'resend'),
        acknowledged_resends: count(sent, (s) => s.why === 'acknowledged-resend'),
        replays: count(sent, (s) => s.body?.replayed === true),
        // Sent, no answer or a 503, and yet committed: the first acknowledgement was a replay of a resend.
        resends_found_committed:
          [...groupBy(foundCommitted, (why) => why)].map(([why, n]) => `${why}:${n.length}`).join(',') || 0,
        kills: victim.kills,
        victim_start_ms: `${ms(Math.min(...victim.starts))}-${ms(Math.max(...victim.starts))}`,
        victim_dead_ms: `${ms(Math.min(...victim.deadMs))}-${ms(Math.max(...victim.deadMs))}`,
        postgres_restarts: outage.upDone < Infinity ? 1 : 0,
        postgres_away_ms: ms(outage.upDone - outage.downStart),
        answers_503: answers503.length,
        last_503_after_up_ms: answers503.length
          ? ms(Math.max(...answers503.map((s) => s.end)) - outage.upDone)
          : 'none',
        connection_errors: noAnswer.length,
        connection_errors_by_kind: [...groupBy(noAnswer, (s) => s.error ?? '?')]
          .map(([k, v]) => `${k.replace(/ /g, '_')}:${v.length}`)
          .join(','),
        slowest_answer_ms: ms(Math.max(...sent.filter((s) => s.status !== 0).map((s) => s.end - s.start))),
        final_checks: final.length,
        final_replays: count(final, (s) => s.status === 200 && s.body?.replayed === true),
        lost: lost.length,
        doubled_persons: doubledPersons.length,
        unfinished: unfinished.length,
        max_requests_of_a_client: Math.max(...requests),
      });

      expect(victim.kills).toBeGreaterThanOrEqual(scale.chaosKills);
      expect(outage.upDone).toBeLessThan(Infinity);
      // The chaos met the load: requests reached the killed replica and the stopped server.
      expect(noAnswer.length).toBeGreaterThan(0);
      expect(answers503.length).toBeGreaterThan(0);
      expect(unexpected).toEqual([]);
      expect(unfinished).toEqual([]);
      expect(answers503.map(bad503).filter((x) => x !== null)).toEqual([]);
      expect(
        outsideOutage.map((s) => `${s.event.eventId} via ${s.replica} at ${ms(s.start - outage.upDone)} ms after up`),
      ).toEqual([]);
      expect(
        noAnswer
          .filter((s) => s.replica !== VICTIM || s.error?.startsWith('TimeoutError'))
          .map((s) => `${s.event.eventId} via ${s.replica}: ${s.error}`),
      ).toEqual([]);
      expect(
        final.filter((s) => !acknowledged(s)).map((s) => `${s.event.eventId}: ${s.status} ${s.error ?? ''}`),
      ).toEqual([]);
      expect(wrongAck.map((s) => `${s.event.eventId} (${s.why}): ${s.status} ${JSON.stringify(s.body)}`)).toEqual([]);
      expect(doubledEvents).toEqual([]);
      expect(notReplayed).toEqual([]);
      expect(ackedEvents.length).toBe(events.size);
      expect(lost).toEqual([]);
      expect(stored.size).toBe(events.size);
      expect(doubledPersons).toEqual([]);
      expect(elsewhere).toEqual([]);
    },
    FULL ? 600_000 : 180_000,
  );
});
