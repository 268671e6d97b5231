// How big the resilience runs are: small in `npm test`, full size in `npm run test:resilience`.
export const FULL = process.env.RESILIENCE === 'full';

export const scale = {
  /** SIGKILLs of the child gateway under load, and the submissions spread over them. */
  crashKills: FULL ? 50 : 4,
  crashSubmissions: FULL ? 10_000 : 600,
  /** Runs of each property (fast-check numRuns). */
  propertyRuns: FULL ? 2_000 : 150,
  /** Clients, events per client, and distinct persons in the concurrency run. */
  concurrencyClients: FULL ? 16 : 8,
  concurrencyEvents: FULL ? 150 : 40,
  concurrencyPersons: FULL ? 60 : 20,
  /** Several gateway processes on one PostgreSQL: rounds of new persons, and persons whose field is raced. */
  replicaRounds: FULL ? 20 : 3,
  replicaPersons: FULL ? 20 : 8,
  replicaFieldPersons: FULL ? 100 : 12,
  /** Clients posting leads while PostgreSQL is stopped and started (or restarted), and those cycles. */
  restartClients: FULL ? 8 : 4,
  restartCycles: FULL ? 10 : 2,
  /** Three replicas under load: SIGKILLs (and restarts) of one of them; PostgreSQL is restarted once midway. */
  chaosKills: FULL ? 20 : 3,
};

/** Writes one line of figures for docs/reliability.md to stdout. */
export function reportFigures(name: string, figures: Record<string, number | string>): void {
  console.log(
    `[resilience] ${name}: ${Object.entries(figures)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')}`,
  );
}
