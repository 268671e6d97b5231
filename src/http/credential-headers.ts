// A request carries at most one credential header of each kind; a second one is refused, not guessed at.
import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.js';

const CREDENTIAL_HEADERS = ['authorization', 'x-bot-api-key'];

/**
 * Node keeps the first of two `Authorization` headers and joins two `X-Bot-API-Key` headers with
 * ", ": a proxy and the gateway could then each act on a different credential. Two of either are a
 * 400 before any key is looked up.
 */
export function refuseRepeatedCredentials(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    const raw = request.raw.rawHeaders;
    for (const name of CREDENTIAL_HEADERS) {
      let seen = 0;
      for (let i = 0; i < raw.length; i += 2)
        if (raw[i]!.length === name.length && raw[i]!.toLowerCase() === name) seen++;
      if (seen > 1)
        throw new AppError(
          'bad-request',
          `Send one ${name === 'authorization' ? 'Authorization' : 'X-Bot-API-Key'} header, not ${seen}.`,
        );
    }
  });
}
