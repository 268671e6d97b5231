// U+0000 written into the URL (`%00`) is refused before any route, hook or upstream sees the request.
import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.js';

/**
 * PostgreSQL cannot store U+0000 (SQLite can), and path parameters and query values reach the store
 * (a legacy lead id, an admin filter) and the upstream legacy API. Node already refuses a raw NUL in
 * the request line; the percent-encoded one is refused here, in the path or the query alike, before
 * authentication, so a refused request is neither counted nor forwarded. `%00` has no letters, so
 * there is no case to fold.
 */
export function refuseNulInUrl(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    if (request.url.includes('%00')) {
      throw new AppError(
        'nul-character',
        'The URL holds %00, the character U+0000, in its path or query; it cannot be stored. Remove it and resend.',
      );
    }
  });
}
