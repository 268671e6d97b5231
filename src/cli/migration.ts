// `lead-gateway integrations`, `keys`, `import-key` ... `replicas`, `audit`: integrations' keys and migration
// state, on the database or on a running gateway (--url), with the same output either way.
import { ScheduleInputSchema } from '../migration/schedule.js';
import { scheduleSentence } from '../migration/schedule-view.js';
import { InvalidArgumentError, type Command } from 'commander';
import type { z } from 'zod';
import { AuditQuerySchema, KeyParamsSchema, ReasonSchema, ReportQuerySchema } from '../admin/schemas.js';
import { linkSummary, reportText } from './human.js';
import { table } from './table.js';
import { UsageError } from './exit.js';
import { readSecret } from './secret-input.js';
import type { CommandDeps } from './command-deps.js';

/**
 * An argument checked by the admin API's own schema, so a value is refused the same way (exit 2) on the
 * database as by a gateway, which would answer it with a 422.
 */
const checkedBy =
  <T>(schema: z.ZodType<T>) =>
  (value: string): T => {
    const result = schema.safeParse(value);
    if (!result.success) throw new InvalidArgumentError(result.error.issues.map((i) => i.message).join('; '));
    return result.data;
  };
const quietHours = checkedBy(ReportQuerySchema.shape.quiet_period_hours.unwrap());
const auditLimit = checkedBy(AuditQuerySchema.shape.limit.unwrap());
const keyId = checkedBy(KeyParamsSchema.shape.key);
/** A reason holding a line break or an escape sequence would forge the audit table: refused as the API refuses it. */
const reasonArg = checkedBy(ReasonSchema);

/** Where `import-key --key` reads the legacy key when stdin is not the way (a script, a CI job). */
export const IMPORT_KEY_ENV = 'LEAD_GATEWAY_IMPORT_KEY';

export function registerMigrationCommands(program: Command, deps: CommandDeps): void {
  program
    .command('integrations')
    .description('list integrations with their migration state')
    .action(() =>
      deps.withBackend(async (b) => {
        const data = await b.integrations();
        deps.print(
          table(
            ['HANDLE', 'STATE', 'NAME', 'ID'],
            data.items.map((d) => [d.handle, d.state, d.name, d.id]),
          ),
          data,
        );
      }),
    );

  program
    .command('keys')
    .description('list the keys of an integration (by prefix; values are never stored)')
    .argument('<integration>', 'id or workspace:integration handle')
    .action((ref: string) =>
      deps.withBackend(async (b) => {
        const data = await b.keys(ref);
        deps.print(
          table(
            ['ID', 'PREFIX', 'KIND', 'CREATED', 'BY', 'LAST USED', 'REVOKED'],
            data.items.map((k) => [
              k.id,
              k.prefix || '-',
              k.kind,
              k.created_at,
              k.created_by,
              k.last_used_at,
              k.revoked_at,
            ]),
          ),
          data,
        );
      }),
    );

  program
    .command('import-key')
    .description('import an existing legacy key so unchanged bots keep working through the gateway')
    .argument('<integration>', 'id or workspace:integration handle')
    .option(
      '--key [-]',
      `the legacy key itself, from ${IMPORT_KEY_ENV} or else stdin (--key - : stdin only); never its value here`,
    )
    .option('--hash <sha256>', 'or its SHA-256, hex')
    .option('--reason <text>', 'why, for the audit log (no control characters)', reasonArg)
    .action(async (ref: string, o: { key?: string | true; hash?: string; reason?: string }) => {
      if ((o.key === undefined) === (o.hash === undefined)) throw new UsageError('give exactly one of --key or --hash');
      if (typeof o.key === 'string' && o.key !== '-') {
        throw new UsageError(
          `--key takes no value: a key on the command line lands in the shell history and in ps for every user of the host; give it on stdin (printf '%s\\n' "$KEY" | lead-gateway import-key ${ref} --key) or in ${IMPORT_KEY_ENV}`,
        );
      }
      if (o.hash !== undefined && !/^[0-9a-fA-F]{64}$/.test(o.hash))
        throw new UsageError('--hash must be 64 hex digits (SHA-256)');
      const secret =
        o.key === undefined
          ? undefined
          : await readSecret(
              deps.env,
              IMPORT_KEY_ENV,
              `--key: give the key on stdin or in ${IMPORT_KEY_ENV}, never as an argument`,
              o.key === '-',
            );
      if (secret === '')
        throw new UsageError(
          `--key: the key read from ${o.key === '-' ? 'stdin' : `${IMPORT_KEY_ENV} or stdin`} is empty`,
        );
      return deps.withBackend(async (b) => {
        const key = await b.importKey(ref, { hash: o.hash, reason: o.reason, key: secret });
        deps.print(`Imported legacy key ${key.prefix ? `${key.prefix}… ` : ''}(id ${key.id}) for ${ref}.`, key);
      });
    });

  program
    .command('issue-key')
    .description('issue the additional v1 key (legacy -> migrating); links legacy-created leads')
    .argument('<integration>', 'id or workspace:integration handle')
    .option('--reason <text>', 'why, for the audit log (no control characters)', reasonArg)
    .action((ref: string, o: { reason?: string }) =>
      deps.withBackend(async (b) => {
        const r = await b.issueKey(ref, o.reason);
        const links = {
          linked_leads: r.linked_leads ?? 0,
          unlinked_leads: r.unlinked_leads ?? [],
          unlinked_leads_total: r.unlinked_leads_total ?? 0,
          unlinked_by_code: r.unlinked_by_code ?? { no_rule: 0, missing_member: 0, bound_to_another_person: 0 },
        };
        // The key comes last, set apart, so it is not lost above a long report.
        deps.print(
          [
            `state: ${r.state}`,
            ...linkSummary(links),
            '',
            `v1 key for ${ref} (shown once, store it now):`,
            '',
            `  ${r.key}`,
            '',
          ].join('\n'),
          r,
        );
      }),
    );

  program
    .command('issue-test-key')
    .description('issue a v1 test key: its calls run the whole v1 path and keep nothing (no state moves)')
    .argument('<integration>', 'id or workspace:integration handle')
    .option('--reason <text>', 'why, for the audit log (no control characters)', reasonArg)
    .action((ref: string, o: { reason?: string }) =>
      deps.withBackend(async (b) => {
        const r = await b.issueTestKey(ref, o.reason);
        deps.print(
          [`v1 test key for ${ref} (shown once, store it now; its calls keep nothing):`, '', `  ${r.key}`, ''].join(
            '\n',
          ),
          r,
        );
      }),
    );

  program
    .command('link')
    .description('re-run the linking of legacy-created leads (after fixing the legacy rule), without a new key')
    .argument('<integration>', 'id or workspace:integration handle')
    .option('--reason <text>', 'why, for the audit log (no control characters)', reasonArg)
    .action((ref: string, o: { reason?: string }) =>
      deps.withBackend(async (b) => {
        const links = await b.link(ref, o.reason);
        deps.print(linkSummary(links).join('\n'), links);
      }),
    );

  program
    .command('revoke-key')
    .description('revoke one key of an integration at once (see `keys` for ids); the others go on working')
    .argument('<integration>', 'id or workspace:integration handle')
    .argument('<key-id>', "the key's id", keyId)
    .option('--reason <text>', 'why, for the audit log (no control characters)', reasonArg)
    .action((ref: string, keyId: string, o: { reason?: string }) =>
      deps.withBackend(async (b) => {
        const key = await b.revokeKey(ref, keyId, o.reason);
        deps.print(`Revoked ${key.kind} key ${key.id}${key.prefix ? ` (${key.prefix}…)` : ''} of ${ref}.`, key);
      }),
    );

  program
    .command('renew')
    .description('"renew key": revoke every key of the integration at once, issue one new v1 key')
    .argument('<integration>', 'id or workspace:integration handle')
    .option('--reason <text>', 'why, for the audit log (no control characters)', reasonArg)
    .action((ref: string, o: { reason?: string }) =>
      deps.withBackend(async (b) => {
        const r = await b.renew(ref, o.reason);
        deps.print(`Revoked ${r.revoked_keys ?? 0} key(s). New v1 key for ${ref} (shown once):\n  ${r.key}`, r);
      }),
    );

  program
    .command('switch-off')
    .description('switch the deprecated interface off for an integration (its old key then gets 403)')
    .argument('<integration>', 'id or workspace:integration handle')
    .requiredOption('--reason <text>', 'why, for the audit log (no control characters)', reasonArg)
    .option('--force', 'even if legacy calls were seen within the quiet period')
    .option('--quiet-hours <n>', 'quiet period in hours (default 24)', quietHours)
    .action((ref: string, o: { reason: string; force?: boolean; quietHours?: number }) =>
      deps.withBackend(async (b) => {
        const state = await b.switchOff(ref, { reason: o.reason, force: o.force ?? false, quietHours: o.quietHours });
        deps.print(`${ref} is now ${state.state}.`, state);
      }),
    );

  program
    .command('schedule-switch-off')
    .description(
      'schedule the switch-off: at that moment one replica carries it out if the integration is ready (or with --force), else retries',
    )
    .argument('<integration>', 'id or workspace:integration handle')
    .requiredOption('--at <time>', 'when, an ISO 8601 date and time with its zone, e.g. 2026-12-09T10:00:00Z')
    .option('--force', 'switch off whatever the readiness verdict')
    .option('--retry-minutes <n>', 'minutes between attempts refused as not ready (5-1440, default 60)', Number)
    .option('--deadline <time>', 'no attempt after it (default: 7 days after --at)')
    .option('--reason <text>', 'why, for the audit log (no control characters)', reasonArg)
    .action(
      (ref: string, o: { at: string; force?: boolean; retryMinutes?: number; deadline?: string; reason?: string }) =>
        deps.withBackend(async (b) => {
          const input = ScheduleInputSchema.safeParse({
            at: o.at,
            force: o.force ?? false,
            ...(o.retryMinutes === undefined ? {} : { retry_minutes: o.retryMinutes }),
            ...(o.deadline === undefined ? {} : { deadline: o.deadline }),
            ...(o.reason === undefined ? {} : { reason: o.reason }),
          });
          if (!input.success) {
            const issue = input.error.issues[0]!;
            throw new UsageError(`--${String(issue.path[0] ?? 'at').replace('_', '-')}: ${issue.message}`);
          }
          const view = await b.scheduleSwitchOff(ref, input.data);
          deps.print(scheduleSentence(view), view);
        }),
    );

  program
    .command('schedule')
    .description("the integration's scheduled switch-off, pending or how it ended")
    .argument('<integration>', 'id or workspace:integration handle')
    .action((ref: string) =>
      deps.withBackend(async (b) => {
        const view = await b.schedule(ref);
        deps.print(scheduleSentence(view), view);
      }),
    );

  program
    .command('cancel-switch-off')
    .description("cancel the integration's pending scheduled switch-off")
    .argument('<integration>', 'id or workspace:integration handle')
    .action((ref: string) =>
      deps.withBackend(async (b) => {
        const view = await b.cancelSchedule(ref);
        deps.print(scheduleSentence(view), view);
      }),
    );

  program
    .command('rollback')
    .description('roll a switch-off back to migrating (the old key works again)')
    .argument('<integration>', 'id or workspace:integration handle')
    .requiredOption('--reason <text>', 'why, for the audit log (no control characters)', reasonArg)
    .action((ref: string, o: { reason: string }) =>
      deps.withBackend(async (b) => {
        const state = await b.rollback(ref, o.reason);
        deps.print(`${ref} is now ${state.state}.`, state);
      }),
    );

  program
    .command('report')
    .description('migration report: legacy and v1 calls, ignored fields, unlinked leads, readiness')
    .argument('<integration>', 'id or workspace:integration handle')
    .option('--quiet-hours <n>', 'quiet period in hours (default 24)', quietHours)
    .action((ref: string, o: { quietHours?: number }) =>
      deps.withBackend(async (b) => {
        const r = await b.report(ref, o.quietHours);
        deps.print(reportText(r), r);
      }),
    );

  program
    .command('replicas')
    .description(
      'the live gateway replicas on the database, the rules version each runs, and whether they differ (PostgreSQL, or --url)',
    )
    .action(() =>
      deps.withBackend(async (b) => {
        const data = await b.replicas();
        const rows = data.items.map((r) => [
          r.id,
          r.rules_version ?? '-',
          r.rules_loaded_at ?? '-',
          r.last_heartbeat_at,
          r.last_reload_error ? `failed at ${r.last_reload_error.at}` : '-',
        ]);
        const summary = data.drift
          ? `DRIFT: the live replicas run ${data.rules_versions.length} versions of the rules: ${data.rules_versions.join(', ')}`
          : `rules: ${data.rules_versions[0] ?? 'none recorded'} on every live replica`;
        deps.print([table(['ID', 'RULES', 'LOADED', 'HEARTBEAT', 'LAST RELOAD'], rows), '', summary].join('\n'), data);
      }),
    );

  program
    .command('audit')
    .description('the audit log, newest first')
    .argument('[integration]', 'id or workspace:integration handle (all when omitted)')
    .option('--limit <n>', 'how many entries', auditLimit, 50)
    .action((ref: string | undefined, o: { limit: number }) =>
      deps.withBackend(async (b) => {
        const { list, handles } = await b.audit(ref, o.limit);
        const handleOf = (integrationId: string) => handles.get(integrationId) ?? integrationId;
        deps.print(
          table(
            ['AT', 'INTEGRATION', 'ACTION', 'STATE', 'ACTOR', 'REASON'],
            list.items.map((e) => [
              e.at,
              handleOf(e.integration_id),
              e.action,
              `${e.from_state} -> ${e.to_state}`,
              e.actor,
              e.reason,
            ]),
          ),
          list,
        );
      }),
    );
}
