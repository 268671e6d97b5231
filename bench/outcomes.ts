// The three outcomes of a new lead on PostgreSQL (created, attached, reactivated), each sent alone a
// number of times on the warm gateway: its round trips (the gateway's counter) and statements
// (pg_stat_statements) per request. The load scenarios measure only "created"; an attached or a
// reactivated lead takes more statements (docs/architecture.md), and each has a target of its own.
import { CHILD_ADMIN_TOKEN, postJson, type ChildGateway } from '../test/support/child-gateway.js';
import type { OutcomeProbe } from './engines.js';
import { bodyOf } from './load.js';
import { MEASURED_OFFSET } from './measure.js';
import type { BenchDatabase } from './postgres.js';
import { ROUND_TRIPS_COUNTER, counterSum, metricsOf } from './prometheus.js';
import { leadTemplate } from './templates.js';

/** Requests of each outcome; the median of their counts is reported (a background flush lands in a few). */
export const PROBES = 15;
/** Where the created probes' numbers start: past every number a scenario uses, so each is a new person. */
const CREATED_FROM = 30_000_000;

const middle = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/**
 * Sends the probes to `gw` (whose key is in `headers`): `stored` persons of the new-lead scenario `run`
 * (numbered from MEASURED_OFFSET) get a new inquiry each (attached to their open lead), then, once
 * that lead is closed through the admin API, another (reactivated).
 */
export async function probeOutcomes(
  gw: ChildGateway,
  headers: Record<string, string>,
  run: string,
  stored: number,
  database: BenchDatabase,
): Promise<OutcomeProbe[]> {
  const leads = `${gw.address}/api/integrations/v1/leads/`;
  const counted: Record<OutcomeProbe['outcome'], { roundTrips: number[]; statements: number[] }> = {
    created: { roundTrips: [], statements: [] },
    attached: { roundTrips: [], statements: [] },
    reactivated: { roundTrips: [], statements: [] },
  };
  const roundTrips = async () => counterSum(await metricsOf(gw.address), ROUND_TRIPS_COUNTER);
  const send = async (outcome: OutcomeProbe['outcome'], body: object): Promise<string> => {
    const [tripsBefore, statementsBefore] = [await roundTrips(), await database.statementCalls()];
    const sent = await postJson<{ intake_outcome?: string; lead?: { id: string } }>(leads, headers, body);
    const [tripsAfter, statementsAfter] = [await roundTrips(), await database.statementCalls()];
    if (sent.body.intake_outcome !== outcome)
      throw new Error(`a ${outcome} probe answered ${sent.status} ${JSON.stringify(sent.body)}`);
    if (tripsBefore !== null && tripsAfter !== null) counted[outcome].roundTrips.push(tripsAfter - tripsBefore);
    if (statementsBefore !== null && statementsAfter !== null)
      counted[outcome].statements.push(statementsAfter - statementsBefore);
    return sent.body.lead!.id;
  };
  const admin = { authorization: `Bearer ${CHILD_ADMIN_TOKEN}` };
  for (let k = 0; k < Math.min(PROBES, stored); k++) {
    const created = JSON.parse(bodyOf(leadTemplate(`${run}-probe`), CREATED_FROM + k)) as object;
    await send('created', created);
    // A stored person of the scenario, by its external id and phone, with an event of its own.
    const person = JSON.parse(bodyOf(leadTemplate(run), MEASURED_OFFSET + k)) as Record<string, unknown>;
    const lead = await send('attached', { ...person, event_id: `${run}-attached-${k}` });
    const closed = await postJson(`${gw.address}/admin/v1/leads/${lead}/close`, admin, {});
    if (closed.status !== 200)
      throw new Error(`closing a probe's lead answered ${closed.status} ${JSON.stringify(closed.body)}`);
    await send('reactivated', { ...person, event_id: `${run}-reactivated-${k}` });
  }
  return (['created', 'attached', 'reactivated'] as const).map((outcome) => ({
    outcome,
    requests: Math.min(PROBES, stored),
    round_trips: counted[outcome].roundTrips.length > 0 ? middle(counted[outcome].roundTrips) : null,
    statements: counted[outcome].statements.length > 0 ? middle(counted[outcome].statements) : null,
  }));
}
