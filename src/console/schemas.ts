// The console's route parameters and queries as zod schemas, validated by the app's validator like every
// other route's: a malformed one is the console's 400 page before any handler runs.
import { z } from 'zod';
import { IntegrationParamsSchema, KeyParamsSchema, LeadParamsSchema } from '../admin/schemas.js';
import { CHART_RANGES } from './chart.js';

/** An integration by id or handle, as in the admin API's paths. */
export const ConsoleIntegrationParamsSchema = IntegrationParamsSchema;
/** A lead by its id (a uuid), as in the admin API's lead paths. */
export const ConsoleLeadParamsSchema = LeadParamsSchema;
/** One key of an integration (its id), as in the admin API's revoke path. */
export const ConsoleKeyParamsSchema = KeyParamsSchema;

/**
 * An integration's page: the chart's range. Absent or unknown, the chart picks the range that covers
 * its data (chart.ts defaultRange): the address is typed and shared by people, so it is not refused.
 */
export const IntegrationPageQuerySchema = z.object({
  range: z.enum(CHART_RANGES).optional().catch(undefined),
});

/** The answers 404 page: the cursor of the admin API's GET .../not-found (`next` of the page before). */
export const NotFoundPageQuerySchema = z.object({
  after: z.string().max(2000).optional(),
});

/** The one value a confirmation step adds to the form it repeats. */
export const CONFIRMED = 'yes';
