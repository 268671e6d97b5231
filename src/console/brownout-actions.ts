// The integration page's brownout windows: the service team adds one (a start, its zone, its minutes)
// and cancels a stored one, through the services the admin API calls; a refusal is shown on the page.
import type { FastifyReply } from 'fastify';
import type { Integration } from '../rules/catalog.js';
import { addBrownout, BrownoutInputSchema, cancelBrownout } from '../migration/brownout-windows.js';
import type { MigrationDeps } from '../migration/service.js';
import type { Act } from './actions.js';
import { filled, parsed } from './form-fields.js';

/** A datetime-local field's value (no zone), to which the form's zone field is added. */
const LOCAL_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d)?$/;

export function brownoutActions(
  act: (path: string, run: Act) => void,
  back: (reply: FastifyReply, integration: Integration) => FastifyReply,
  deps: MigrationDeps,
): void {
  act('brownouts', async ({ viewer, integration, fields, reply }) => {
    const start = filled(fields.start);
    // The zone field: Z (UTC) unless the person gave an offset such as +05:00.
    const zone = filled(fields.zone) ?? 'Z';
    const body = parsed(BrownoutInputSchema, {
      start:
        start !== undefined && LOCAL_TIME.test(start) ? `${start.length === 16 ? `${start}:00` : start}${zone}` : start,
      minutes: filled(fields.minutes) === undefined ? undefined : Number(fields.minutes),
    });
    await addBrownout(deps, integration, { ...body, actor: viewer.name });
    return back(reply, integration);
  });

  act('brownouts/cancel', async ({ viewer, integration, fields, reply }) => {
    await cancelBrownout(deps, integration, filled(fields.id) ?? '', { actor: viewer.name });
    return back(reply, integration);
  });
}
