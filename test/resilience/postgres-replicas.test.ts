// Several gateway processes on one PostgreSQL database, over real HTTP: the races that one SQLite
// writer never had. (a) Different events about the same new person, sent at once through different
// processes, must make one contact and one lead, whether the person is known by an external id or only
// by a phone. (b) Integrations writing the same empty field of the same person at once: the first
// value stands, exactly one answer says `written`, the others `kept_existing` (docs/api.md, "What
// happens to each answer"). Both hold only once person matching and field writes take per-person locks.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHILD_ADMIN_TOKEN, spawnGateway, type ChildGateway } from '../support/child-gateway.js';
import { clusterOrSkip, freshDatabase, type TestPostgres } from '../support/postgres.js';
import { FULL, reportFigures, scale } from './scale.js';
import { goalRules } from '../support/goal-rules.js';

const PROCESSES = 3;
/** One client timeout for every request: an answer must come well inside it. */
const CLIENT_TIMEOUT_MS = 15_000;

/** One workspace whose three integrations all map the answer `goal` to one text field, keep_existing. */
const RULES = goalRules('racing', ['bot-a', 'bot-b', 'bot-c']);
const INTEGRATIONS = ['racing:bot-a', 'racing:bot-b', 'racing:bot-c'];

const rulesDir = mkdtempSync(join(tmpdir(), 'lead-gateway-replicas-'));
writeFileSync(join(rulesDir, 'racing.yaml'), RULES);

let cluster: TestPostgres | null = null;
let db: pg.Client;
const gateways: ChildGateway[] = [];
/** Keys by integration handle, issued through the admin API of the first process. */
const keys = new Map<string, string>();

beforeAll(async () => {
  cluster = await clusterOrSkip();
  if (!cluster) return;
  const url = await freshDatabase(cluster.url);
  const env = {
    DATABASE_URL: url,
    ADMIN_TOKEN: CHILD_ADMIN_TOKEN,
    RULES_DIR: rulesDir,
    RATE_LIMIT_PER_MINUTE: '1000000',
  };
  // Started at once: the migration at start runs under its advisory lock in one of them.
  gateways.push(...(await Promise.all(Array.from({ length: PROCESSES }, () => spawnGateway({ env, capture: true })))));
  for (const handle of INTEGRATIONS) {
    const res = await fetch(`${gateways[0]!.address}/admin/v1/integrations/${handle}/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${CHILD_ADMIN_TOKEN}` },
    });
    if (res.status !== 201) throw new Error(`issuing a key for ${handle}: ${res.status} ${await res.text()}`);
    keys.set(handle, ((await res.json()) as { key: string }).key);
  }
  db = new pg.Client({ connectionString: url });
  await db.connect();
}, 90_000);

afterAll(async () => {
  await db?.end();
  await Promise.all(gateways.map((g) => g.stop()));
  await cluster?.stop();
  rmSync(rulesDir, { recursive: true, force: true });
});

interface Answered {
  status: number;
  body: Record<string, unknown>;
}

/** A POST through process `p`; a network error or a timeout is an answer of status 0. */
async function post(p: number, path: string, handle: string, body: unknown): Promise<Answered> {
  try {
    const res = await fetch(`${gateways[p % PROCESSES]!.address}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keys.get(handle)}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  } catch (error) {
    return { status: 0, body: { error: String(error) } };
  }
}

const count = async (sql: string, values: unknown[]): Promise<number> =>
  Number((await db.query(sql, values)).rows[0].n);

/** What the submissions about one new person left behind. */
interface PersonOutcome {
  person: string;
  contacts: number;
  leads: number;
  /** Distinct lead ids the 2xx answers named. */
  answeredLeads: number;
}

/**
 * Rounds of `scale.replicaPersons` new persons each; every person gets `SENDS_PER_PERSON` events with
 * different event_ids, spread over the processes and all sent at once. Each person has a first name
 * of its own, so its contacts and leads are counted whatever they were matched by (or not).
 */
async function racePersons(kind: 'external-id' | 'phone') {
  const statuses = new Map<number, number>();
  const unexpected: string[] = [];
  const outcomes: PersonOutcome[] = [];
  const runTag = `${kind}-${Date.now().toString(36)}`;
  for (let round = 0; round < scale.replicaRounds; round++) {
    const persons = Array.from({ length: scale.replicaPersons }, (_, i) => ({
      name: `${runTag}-${round}-${i}`,
      index: round * scale.replicaPersons + i,
    }));
    const answeredLeads = new Map<string, Set<string>>(persons.map((p) => [p.name, new Set()]));
    const sends = persons.flatMap((person) =>
      Array.from({ length: SENDS_PER_PERSON }, async (_, k) => {
        const body = {
          event_id: `${person.name}-e${k}`,
          first_name: person.name,
          ...(kind === 'external-id'
            ? { external_contact_id: `ext:${person.name}` }
            : { phone: phoneOf(person.index) }),
        };
        const res = await post(k, '/api/integrations/v1/leads/', INTEGRATIONS[0]!, body);
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (res.status !== 201 && res.status !== 200)
          unexpected.push(`${body.event_id} via process ${k % PROCESSES}: ${res.status} ${JSON.stringify(res.body)}`);
        else answeredLeads.get(person.name)!.add((res.body.lead as { id: string }).id);
      }),
    );
    await Promise.all(sends);
    for (const person of persons) {
      outcomes.push({
        person: person.name,
        contacts: await count('SELECT count(*) AS n FROM contacts WHERE first_name = $1', [person.name]),
        leads: await count('SELECT count(*) AS n FROM leads WHERE first_name = $1', [person.name]),
        answeredLeads: answeredLeads.get(person.name)!.size,
      });
    }
  }
  const doubled = outcomes.filter((o) => o.contacts !== 1 || o.leads !== 1 || o.answeredLeads !== 1);
  reportFigures(`postgres replicas, same new person by ${kind} (${FULL ? 'full' : 'quick'})`, {
    processes: PROCESSES,
    persons: outcomes.length,
    requests: [...statuses.values()].reduce((a, b) => a + b, 0),
    statuses: [...statuses].map(([s, n]) => `${s}:${n}`).join(','),
    persons_with_2plus_contacts: outcomes.filter((o) => o.contacts > 1).length,
    persons_with_2plus_leads: outcomes.filter((o) => o.leads > 1).length,
    persons_answered_with_2plus_leads: outcomes.filter((o) => o.answeredLeads > 1).length,
    extra_contacts: outcomes.reduce((a, o) => a + o.contacts - 1, 0),
    extra_leads: outcomes.reduce((a, o) => a + o.leads - 1, 0),
  });
  return { unexpected, doubled };
}

/** Events per new person, sent at once, round-robin over the processes. */
const SENDS_PER_PERSON = 6;
/** A phone per person index, distinct in its last 9 digits (what matching keeps). */
const phoneOf = (index: number) => `+99890${String(1_000_000 + index).slice(-7)}`;

describe(`${PROCESSES} gateway processes on one PostgreSQL database`, () => {
  it(
    'make one contact and one lead of a new person known by external id, whichever processes its events reach',
    async (context) => {
      if (!cluster) return context.skip();
      const { unexpected, doubled } = await racePersons('external-id');
      expect(unexpected).toEqual([]);
      expect(doubled).toEqual([]);
    },
    FULL ? 600_000 : 60_000,
  );

  it(
    'make one contact and one lead of a new person known only by phone',
    async (context) => {
      if (!cluster) return context.skip();
      const { unexpected, doubled } = await racePersons('phone');
      expect(unexpected).toEqual([]);
      expect(doubled).toEqual([]);
    },
    FULL ? 600_000 : 60_000,
  );

  it(
    'keep the first value of a field that several integrations write at once, and tell the others kept_existing',
    async (context) => {
      if (!cluster) return context.skip();
      const unexpected: string[] = [];
      const broken: string[] = [];
      const written = new Map<number, number>();
      const runTag = `field-${Date.now().toString(36)}`;
      for (let i = 0; i < scale.replicaFieldPersons; i++) {
        // The person first, one integration at a time: the first creates it, the others join it by
        // phone, which binds their ids to it, so each may send answers about it.
        const phone = phoneOf(50_000 + i);
        for (const [n, handle] of INTEGRATIONS.entries()) {
          const res = await post(n, '/api/integrations/v1/leads/', handle, {
            event_id: `${runTag}-${i}-lead`,
            external_contact_id: `${handle}:${runTag}-${i}`,
            first_name: 'Field',
            phone,
          });
          if (res.status !== (n === 0 ? 201 : 200))
            throw new Error(`setting up person ${i} through ${handle}: ${res.status} ${JSON.stringify(res.body)}`);
        }
        // Then each integration, through its own process, writes the empty field at once.
        const sent = INTEGRATIONS.map((handle) => `goal of ${handle}`);
        const answers = await Promise.all(
          INTEGRATIONS.map((handle, n) =>
            post(n, '/api/integrations/v1/leads/answers/', handle, {
              event_id: `${runTag}-${i}-answers`,
              external_contact_id: `${handle}:${runTag}-${i}`,
              answers: { goal: sent[n] },
            }),
          ),
        );
        for (const [n, res] of answers.entries())
          if (res.status !== 200)
            unexpected.push(`person ${i}, ${INTEGRATIONS[n]}: ${res.status} ${JSON.stringify(res.body)}`);
        if (answers.some((res) => res.status !== 200)) continue;
        const results = answers.map((res) => res.body.answers as { written: string[]; kept_existing: string[] });
        const writers = INTEGRATIONS.filter((_, n) => results[n]!.written.includes('goal'));
        const keepers = INTEGRATIONS.filter((_, n) => results[n]!.kept_existing.includes('goal'));
        written.set(writers.length, (written.get(writers.length) ?? 0) + 1);
        const rows = (
          await db.query(
            `SELECT v.text_value, v.written_by_ref FROM custom_field_values v JOIN leads l ON l.id = v.lead_id JOIN contacts c ON c.id = l.contact_id WHERE c.phone = $1`,
            [phone],
          )
        ).rows as { text_value: string; written_by_ref: string }[];
        const stored = rows[0]?.text_value;
        const writer = writers.length === 1 ? sent[INTEGRATIONS.indexOf(writers[0]!)] : undefined;
        if (
          rows.length !== 1 ||
          writers.length !== 1 ||
          keepers.length !== INTEGRATIONS.length - 1 ||
          stored !== writer
        ) {
          broken.push(
            `person ${i}: written by ${writers.join('+') || 'none'}, kept_existing for ${keepers.join('+') || 'none'}, stored ${JSON.stringify(rows)}`,
          );
        }
        if (!sent.includes(stored ?? ''))
          broken.push(`person ${i}: stored ${JSON.stringify(stored)}, none of the values sent`);
      }
      reportFigures(
        `postgres replicas, one field written at once by ${INTEGRATIONS.length} integrations (${FULL ? 'full' : 'quick'})`,
        {
          persons: scale.replicaFieldPersons,
          requests_not_200: unexpected.length,
          persons_by_written_count: [...written]
            .sort(([a], [b]) => a - b)
            .map(([w, n]) => `${w}:${n}`)
            .join(','),
          persons_broken: broken.length,
        },
      );
      expect(unexpected).toEqual([]);
      expect(broken).toEqual([]);
    },
    FULL ? 600_000 : 60_000,
  );
});
