// What the CLI prints for people at a terminal, from the admin API's objects (--json prints the objects).
import { brownoutSentence } from '../migration/brownout-report.js';
import { scheduleSentence } from '../migration/schedule-view.js';
import type { MigrationReport } from '../migration/report.js';
import { ADMIN_REQUEST_TIMEOUT_MS } from './admin-client.js';
import type { LinkReportView } from './backend.js';
import { table } from './table.js';
import { escapeControls as shown } from '../printable-text.js';

export const HELP_AFTER = `
Targets:
  database (default)  --database <file> / DATABASE_PATH, or --database-url <url> / DATABASE_URL
  a running gateway   --url <base URL> / LEAD_GATEWAY_URL, over its admin API: no database access
                      or shell in a container needed. The admin token is read from the environment,
                      LEAD_GATEWAY_ADMIN_TOKEN (or else ADMIN_TOKEN), never from an argument: an
                      argument shows in \`ps\` and stays in the shell's history. Changes are audited
                      under the token's operator. Each request waits at most ${ADMIN_REQUEST_TIMEOUT_MS / 1000} s (--timeout).
  migrate and admin-token work on the database only.
  copy --from <file> reads a stopped gateway's SQLite file and writes the PostgreSQL database of
                      DATABASE_URL (never --database-url).
  rules check <dir>   needs neither: the folder checked as a gateway would at start (exit 1 on a problem).
  rules diff <dir>    needs --url: the folder against the rules that gateway has loaded (exit 1 if they differ).

Exit codes: 0 done, 1 refused, 2 usage, 3 environment (database, rules, gateway or token unusable).
`;

/** How many unlinked lead ids a summary names per code; `--json` lists the first LINK_REPORT_UNLINKED_ITEMS. */
const FIRST_UNLINKED = 5;

/** Linked and unlinked legacy leads in a few lines: counts by reason and the first ids, never one line a lead. */
export function linkSummary(links: LinkReportView): string[] {
  const lines = [`legacy leads linked: ${links.linked_leads}; not linked: ${links.unlinked_leads_total}`];
  const byCode = new Map<string, { reason: string; ids: string[] }>();
  for (const u of links.unlinked_leads) {
    const entry = byCode.get(u.code) ?? { reason: u.reason, ids: [] };
    if (entry.ids.length < FIRST_UNLINKED) entry.ids.push(u.lead_id);
    byCode.set(u.code, entry);
  }
  for (const [code, e] of byCode) {
    const count = links.unlinked_by_code[code as keyof LinkReportView['unlinked_by_code']];
    const listed =
      links.unlinked_leads_total > links.unlinked_leads.length
        ? `--json lists the first ${links.unlinked_leads.length} of all codes`
        : '--json lists all';
    const more = count > e.ids.length ? `, and ${count - e.ids.length} more (${listed})` : '';
    lines.push(
      `  ${count} ${shown(code)}${count === 1 ? `: ${shown(e.reason)}` : ` (e.g. ${shown(e.reason)})`}`,
      `    ${e.ids.join(', ')}${more}`,
    );
  }
  return lines;
}

/** The latest few ids that got a 404, and where the rest are. */
function notFoundLatest(r: MigrationReport): string {
  const first = r.answers_not_found.items.slice(0, FIRST_UNLINKED);
  if (first.length === 0) return '';
  const linked = (e: MigrationReport['answers_not_found']['items'][number]) =>
    e.legacy_leads.length > 0 ? ' (an unlinked legacy lead)' : '';
  return `, latest: ${first.map((e) => `${shown(e.external_contact_id)}${linked(e)}`).join(', ')}${r.answers_not_found.ids > first.length ? '; all: not-found <integration>' : ''}`;
}

/** The migration report in a screenful: state, readiness and why, calls per route, what is left. */
export function reportText(r: MigrationReport): string {
  // OK 7D and LAST SUCCESS: the calls answered with a 2xx, which readiness asks of v1.
  const row = (api: string) => (x: MigrationReport['v1']['routes'][number]) => [
    api,
    x.route,
    x.calls_24h,
    x.calls_7d,
    x.last_seen,
    x.successful_7d,
    x.last_success,
  ];
  const routes = [...r.legacy.routes.map(row('legacy')), ...r.v1.routes.map(row('v1'))];
  return [
    `${r.integration.handle} (${shown(r.integration.name)}): ${r.state}`,
    `readiness: ${r.readiness.verdict}${r.readiness.reasons.map((x) => `\n  - ${shown(x)}`).join('')}`,
    '',
    routes.length > 0
      ? table(
          ['API', 'ROUTE', '24H', '7D', 'LAST SEEN', 'OK 7D', 'LAST SUCCESS'],
          routes as (string | number | null)[][],
        )
      : 'no calls counted yet',
    '',
    // Field names a bot sent: anything a bot wrote is shown escaped.
    `ignored legacy fields: ${r.ignored_legacy_fields.map((f) => `${shown(f.field)} (${f.calls})`).join(', ') || 'none'}`,
    `unlinked legacy leads: ${r.unlinked_legacy_leads_total_capped ? 'more than ' : ''}${r.unlinked_legacy_leads_total}`,
    `live keys: ${r.keys.v1} v1, ${r.keys.legacy} legacy`,
    `ported: ${r.ported === null ? 'not marked' : `marked by ${shown(r.ported.ported_by)} at ${r.ported.ported_at}${r.ported.note === null ? '' : `: ${shown(r.ported.note)}`}`}`,
    // Ids a bot sent: shown escaped.
    `answers 404s: ${r.answers_not_found.ids} id(s), ${r.answers_not_found.calls} call(s)${notFoundLatest(r)}`,
    `brownouts: ${r.brownouts.length === 0 ? 'none' : r.brownouts.map((w) => `\n  - ${brownoutSentence(w)}`).join('')}`,
    `scheduled switch-off: ${r.switch_off_schedule === null ? 'none' : shown(scheduleSentence(r.switch_off_schedule))}`,
  ].join('\n');
}
