// `lead-gateway webhooks`, `webhook-add`, `webhook-rotate`, `webhook-pause`, `webhook-resume`,
// `webhook-ping`, `webhook-deliveries`, `webhook-delete`: the webhook endpoints (docs/webhooks.md), on the
// database or over the admin API. What a receiver answered is its own text: printed with every control
// character escaped (src/cli/output.ts), as everything the CLI prints.
import { InvalidArgumentError, type Command } from 'commander';
import { AppError } from '../errors.js';
import { EndpointInputSchema, PageQuerySchema } from '../webhooks/endpoint-schemas.js';
import type { Backend } from './backend.js';
import { UsageError } from './exit.js';
import { table } from './table.js';
import type { DeliveryPage, EndpointPage, EndpointView, EndpointWithSecret } from './webhook-backend.js';

/** Characters of a receiver's answer in the deliveries table; --json has what the gateway kept. */
export const ANSWER_HEAD_PRINTED = 60;

const limitArg = (value: string): number => {
  const result = PageQuerySchema.shape.limit.unwrap().safeParse(value);
  if (!result.success) throw new InvalidArgumentError(result.error.issues.map((i) => i.message).join('; '));
  return result.data;
};
const page = (o: { limit?: number; after?: string }) => ({
  limit: o.limit ?? 50,
  ...(o.after === undefined ? {} : { after: o.after }),
});

const state = (e: EndpointView) => (e.disabled_at !== null ? 'disabled' : e.paused ? 'paused' : 'active');

export function endpointsText(p: EndpointPage): string {
  if (p.items.length === 0) return 'no webhook endpoint';
  const rows = p.items.map((e) => [
    e.id,
    e.url,
    e.workspace_id ?? 'every workspace',
    e.event_types.join(','),
    state(e),
    e.created_at,
    e.created_by,
  ]);
  return [
    table(['ID', 'URL', 'WORKSPACE', 'EVENT TYPES', 'STATE', 'CREATED', 'BY'], rows),
    ...(p.next_after === null ? [] : ['', `more: --after ${p.next_after}`]),
  ].join('\n');
}

/** The secret, with what the person has to know: it is not shown again. */
export function secretText(e: EndpointWithSecret, rotated: boolean): string {
  return [
    rotated ? `endpoint ${e.id}: new signing secret` : `endpoint ${e.id} added: ${e.url}`,
    `event types: ${e.event_types.join(', ')}`,
    `workspace: ${e.workspace_id ?? 'every workspace'}`,
    `secret: ${e.secret}`,
    `This secret is shown now only, never again: store it where the receiver reads it (lost, replace it with webhook-rotate ${e.id}).`,
    ...(rotated && e.previous_secret_until !== null
      ? [`The previous secret keeps signing beside it until ${e.previous_secret_until}.`]
      : []),
  ].join('\n');
}

export function deliveriesText(p: DeliveryPage): string {
  if (p.items.length === 0) return 'no delivery';
  const rows = p.items.map((d) => {
    const a = d.attempt_log[0];
    return [
      d.created_at,
      d.id,
      d.event_id,
      d.status,
      d.attempts,
      a?.status_code ?? null,
      a === undefined ? null : `${a.duration_ms} ms`,
      a === undefined ? null : (a.response_head ?? a.error ?? '').slice(0, ANSWER_HEAD_PRINTED),
    ];
  });
  return [
    table(['TIME', 'DELIVERY', 'EVENT', 'STATUS', 'ATTEMPTS', 'HTTP', 'DURATION', 'ANSWER'], rows),
    ...(p.next_after === null ? [] : ['', `more: --after ${p.next_after}`]),
  ].join('\n');
}

/** A value the admin API's rules refuse is a usage error (exit 2) on the database as it is over --url (a 422). */
async function asUsage<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof AppError && error.code === 'validation-failed') throw new UsageError(error.message);
    throw error;
  }
}

export function registerWebhookCommands(
  program: Command,
  deps: {
    print(human: string, data: unknown): void;
    withBackend(fn: (backend: Backend) => Promise<void>): Promise<void>;
  },
): void {
  program
    .command('webhooks')
    .description('list the webhook endpoints, by id (no secret)')
    .option('--limit <n>', 'endpoints per page (default 50, at most 100)', limitArg)
    .option('--after <id>', 'the page after the one that printed this id')
    .action((o: { limit?: number; after?: string }) =>
      deps.withBackend(async (b) => {
        const data = await b.webhooks.list(page(o));
        deps.print(endpointsText(data), data);
      }),
    );

  program
    .command('webhook-add')
    .description('subscribe an endpoint to event types; prints its signing secret, once')
    .argument('<url>', 'https address of the receiver')
    .requiredOption('--events <types>', 'event types of the catalogue, comma-separated (docs/webhooks.md)')
    .option('--workspace <workspace>', "a workspace's id or slug (default: every workspace)")
    .option('--description <text>', 'what the endpoint is for')
    .action((url: string, o: { events: string; workspace?: string; description?: string }) =>
      deps.withBackend(async (b) => {
        const input = EndpointInputSchema.safeParse({
          url,
          event_types: o.events
            .split(',')
            .map((t) => t.trim())
            .filter(Boolean),
          ...(o.workspace === undefined ? {} : { workspace: o.workspace }),
          ...(o.description === undefined ? {} : { description: o.description }),
        });
        if (!input.success) {
          const issue = input.error.issues[0]!;
          const option = issue.path[0] === 'event_types' ? 'events' : String(issue.path[0] ?? 'url');
          throw new UsageError(`--${option}: ${issue.message}`);
        }
        const created = await asUsage(() => b.webhooks.create(input.data));
        deps.print(secretText(created, false), created);
      }),
    );

  const byId = (name: string, description: string, run: (b: Backend, id: string) => Promise<void>) =>
    program
      .command(name)
      .description(description)
      .argument('<id>', "the endpoint's id (webhooks lists them)")
      .action((id: string) => deps.withBackend((b) => run(b, id)));

  byId(
    'webhook-rotate',
    'a new signing secret, printed once; the previous one signs beside it for 24 h',
    async (b, id) => {
      const rotated = await b.webhooks.rotate(id);
      deps.print(secretText(rotated, true), rotated);
    },
  );
  byId('webhook-pause', 'pause an endpoint: its events are queued, none is sent', async (b, id) => {
    const view = await b.webhooks.change(id, { paused: true });
    deps.print(`endpoint ${view.id}: ${state(view)}`, view);
  });
  byId('webhook-resume', 'resume a paused endpoint: its queued events are sent', async (b, id) => {
    const view = await b.webhooks.change(id, { paused: false });
    deps.print(`endpoint ${view.id}: ${state(view)}`, view);
  });
  byId('webhook-ping', 'send the endpoint a test event (ping)', async (b, id) => {
    const written = await b.webhooks.ping(id);
    deps.print(
      written.delivery_id === null
        ? `event ${written.event_id} written; no delivery: the endpoint is disabled`
        : `event ${written.event_id} queued for endpoint ${id} (delivery ${written.delivery_id})`,
      written,
    );
  });
  byId('webhook-delete', 'delete an endpoint with its deliveries and their log', async (b, id) => {
    await b.webhooks.remove(id);
    deps.print(`endpoint ${id} deleted`, { id, deleted: true });
  });

  program
    .command('webhook-deliveries')
    .description("the endpoint's deliveries, newest first, with each one's newest attempt")
    .argument('<id>', "the endpoint's id")
    .option('--limit <n>', 'deliveries per page (default 50, at most 100)', limitArg)
    .option('--after <id>', 'the page after the one that printed this delivery id')
    .action((id: string, o: { limit?: number; after?: string }) =>
      deps.withBackend(async (b) => {
        const data = await b.webhooks.deliveries(id, page(o));
        deps.print(deliveriesText(data), data);
      }),
    );
}
