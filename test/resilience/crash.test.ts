// Crash: a child gateway under load is killed with SIGKILL at random moments and restarted on the same
// file. Every request that got a 2xx must be found afterwards, no event may have two leads, every
// resend must be answered (a replay when the first attempt had committed), and the file must be sound.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { DEMO_V1_KEY, spawnGateway, type ChildGateway } from '../support/child-gateway.js';
import { FULL, reportFigures, scale } from './scale.js';

const dir = mkdtempSync(join(tmpdir(), 'lead-gateway-crash-'));
const dbPath = join(dir, 'crash.db');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const CLIENTS = 8;
const bodyOf = (eventId: string) => ({
  event_id: eventId,
  external_contact_id: `crash:${eventId}`,
  first_name: 'Crash',
  answers: { age: 30 },
});

interface Acknowledged {
  leadId: string;
  contactId: string;
}

type Outcome =
  | { kind: 'answered'; status: number; body: { replayed?: boolean; lead?: { id: string }; contact_id?: string } }
  | { kind: 'lost' };

async function send(address: string, eventId: string): Promise<Outcome> {
  try {
    const res = await fetch(`${address}/api/integrations/v1/leads/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${DEMO_V1_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(bodyOf(eventId)),
    });
    return { kind: 'answered', status: res.status, body: (await res.json()) as never };
  } catch {
    return { kind: 'lost' }; // the connection died with the process: the outcome is unknown to the client
  }
}

const start = () =>
  spawnGateway({
    env: { DATABASE_PATH: dbPath, DEMO_MODE: 'true', RATE_LIMIT_PER_MINUTE: '1000000', SQLITE_SYNCHRONOUS: 'FULL' },
  });

describe('SIGKILL under load', () => {
  it(
    `loses no acknowledged submission over ${scale.crashKills} kills and ${scale.crashSubmissions} submissions`,
    async () => {
      const acknowledged = new Map<string, Acknowledged>();
      const unknown = new Set<string>(); // sent, no answer: resent after the restart
      const figures = {
        runs: 0,
        kills: 0,
        requests: 0,
        acknowledged: 0,
        resent_unknown: 0,
        unknown_found_committed: 0,
        resent_acknowledged: 0,
      };
      const next = Array.from({ length: CLIENTS }, () => 0);
      const problems: string[] = [];
      const perCycle = Math.ceil(scale.crashSubmissions / scale.crashKills);

      const record = (eventId: string, outcome: Outcome, resend: 'unknown' | 'acknowledged' | null) => {
        figures.requests++;
        if (outcome.kind === 'lost') return false;
        const { status, body } = outcome;
        if (resend === 'acknowledged') {
          figures.resent_acknowledged++;
          const first = acknowledged.get(eventId)!;
          if (status !== 200 || body.replayed !== true || body.lead?.id !== first.leadId)
            problems.push(`resend of acknowledged ${eventId}: ${status} ${JSON.stringify(body)}`);
          return true;
        }
        if (status !== 201 && !(status === 200 && body.replayed === true)) {
          problems.push(`${eventId}: ${status} ${JSON.stringify(body)}`);
          return true;
        }
        if (resend === 'unknown') {
          figures.resent_unknown++;
          if (body.replayed) figures.unknown_found_committed++;
        } else if (body.replayed) {
          problems.push(`${eventId} was new, yet answered as a replay`);
        }
        acknowledged.set(eventId, { leadId: body.lead!.id, contactId: body.contact_id! });
        unknown.delete(eventId);
        return true;
      };

      // Cycles of load ended by a kill, then one last cycle that fills up to the count and stops cleanly.
      for (;;) {
        const gw: ChildGateway = await start();
        figures.runs++;
        // Resends first: what the clients never heard back about, and one acknowledged event each.
        for (const eventId of [...unknown]) record(eventId, await send(gw.address, eventId), 'unknown');
        const earlier = [...acknowledged.keys()].slice(-CLIENTS);
        for (const eventId of earlier) record(eventId, await send(gw.address, eventId), 'acknowledged');

        const killAt = acknowledged.size + Math.floor(perCycle * (0.5 + Math.random()));
        const lastCycle = figures.kills >= scale.crashKills && acknowledged.size >= scale.crashSubmissions - perCycle;
        // A client runs until its connection dies with the process (or, in the last cycle, the count is reached).
        const client = async (c: number) => {
          for (;;) {
            const eventId = `c${c}-${next[c]}`;
            next[c]!++;
            const outcome = await send(gw.address, eventId);
            if (!record(eventId, outcome, null)) {
              unknown.add(eventId);
              return;
            }
            if (lastCycle && acknowledged.size >= scale.crashSubmissions) return;
          }
        };
        const clients = Array.from({ length: CLIENTS }, (_, c) => client(c));
        if (!lastCycle) {
          while (acknowledged.size < killAt) await new Promise((resolve) => setTimeout(resolve, 2));
          // A random moment inside the next few commits, not just between two of them.
          await new Promise((resolve) => setTimeout(resolve, Math.random() * 15));
          gw.child.kill('SIGKILL');
          figures.kills++;
          await gw.exited;
        }
        await Promise.all(clients);
        if (lastCycle) {
          // Everything still unknown gets its resend before the final stop.
          for (const eventId of [...unknown]) record(eventId, await send(gw.address, eventId), 'unknown');
          await gw.stop('SIGTERM');
          break;
        }
      }

      const db = new Database(dbPath, { readonly: true });
      const integrity = db.pragma('integrity_check', { simple: true });
      const submissions = db.prepare("SELECT event_id, lead_id FROM submissions WHERE endpoint = 'leads'").all() as {
        event_id: string;
        lead_id: string;
      }[];
      const leads = db.prepare('SELECT id FROM leads').pluck().all() as string[];
      const perLead = db
        .prepare("SELECT count(*) FROM submissions WHERE endpoint = 'leads' GROUP BY lead_id HAVING count(*) > 1")
        .all();
      db.close();
      const stored = new Map(submissions.map((s) => [s.event_id, s.lead_id]));
      const lost = [...acknowledged].filter(([eventId, ack]) => stored.get(eventId) !== ack.leadId);
      const orphanLeads = leads.length - new Set(submissions.map((s) => s.lead_id)).size;

      reportFigures(`crash (${FULL ? 'full' : 'quick'})`, {
        ...figures,
        acknowledged: acknowledged.size,
        stored_events: stored.size,
        lost: lost.length,
        leads_with_two_events: perLead.length,
        leads_without_event: orphanLeads,
        integrity: String(integrity),
      });
      expect(problems).toEqual([]);
      expect(figures.kills).toBeGreaterThanOrEqual(scale.crashKills);
      expect(acknowledged.size).toBeGreaterThanOrEqual(scale.crashSubmissions);
      expect(unknown.size).toBe(0);
      expect(lost).toEqual([]);
      expect(perLead).toEqual([]);
      expect(orphanLeads).toBe(0);
      expect(stored.size).toBe(acknowledged.size);
      expect(integrity).toBe('ok');
    },
    FULL ? 1_500_000 : 120_000,
  );
});
