// The gateway's /metrics as the bench reads it around a measured run: a counter's total over its
// label sets, in the Prometheus text format prom-client writes.

/** Round trips to PostgreSQL: each moment a request waits for the database before sending more. */
export const ROUND_TRIPS_COUNTER = 'lead_gateway_postgres_round_trips_total';

/** Every request the gateway answered, by route and status. */
export const REQUESTS_COUNTER = 'lead_gateway_http_requests_total';

/**
 * The sum of `name`'s samples over every label set, or null when the text has no sample of it (a
 * gateway that does not count it: on SQLite, or a build from before the counter). `skip` leaves out
 * the samples whose label text it accepts.
 */
export function counterSum(text: string, name: string, skip?: (labels: string) => boolean): number | null {
  let total: number | null = null;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    // Comments (# HELP, # TYPE) and other metrics, including a longer name that starts with this one.
    if (!line.startsWith(name) || (line[name.length] !== '{' && line[name.length] !== ' ')) continue;
    let labels = '';
    let rest = line.slice(name.length);
    if (rest.startsWith('{')) {
      // A label value may hold spaces or braces: the label set ends at the last '}'.
      const end = rest.lastIndexOf('}');
      if (end < 0) continue;
      labels = rest.slice(1, end);
      rest = rest.slice(end + 1);
    }
    if (skip?.(labels)) continue;
    // The value, then an optional timestamp.
    const value = Number(rest.trim().split(/\s+/)[0]);
    if (!Number.isFinite(value)) continue;
    total = (total ?? 0) + value;
  }
  return total;
}

/** A count per request, to two decimals; null when either end is unknown or nothing was sent. */
export function countPerRequest(before: number | null, after: number | null, requests: number): number | null {
  if (before === null || after === null || requests <= 0) return null;
  return Math.round(((after - before) / requests) * 100) / 100;
}

/** The gateway's /metrics text. */
export const metricsOf = async (gateway: string): Promise<string> => (await fetch(`${gateway}/metrics`)).text();
