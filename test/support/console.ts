// The console over inject: a browser's cookie jar, forms sent with the CSRF token of the page they are on.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { Gateway } from '../helper.js';
import { createConsoleUser } from '../../src/console/users.js';

export const PASSWORD = 'correct horse battery staple';

/** Adds a console user through the service the CLI calls; the password joins the secrets close() looks for. */
export async function addUser(
  gw: Gateway,
  name: string,
  workspace: string | null = null,
  password = PASSWORD,
): Promise<void> {
  gw.secrets.add(password);
  await createConsoleUser(gw.store, gw.rules.current(), { name, password, workspace, createdBy: 'test' });
}

export interface ConsoleClient {
  cookies: Map<string, string>;
  get(url: string): Promise<LightMyRequestResponse>;
  /** Posts a form; `csrfFrom` is the page whose token it carries (none: no token at all). */
  post(url: string, fields: Record<string, string>, csrfFrom?: string | null): Promise<LightMyRequestResponse>;
  signIn(name: string, password?: string): Promise<LightMyRequestResponse>;
}

export const csrfTokenOf = (html: string): string | null => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? null;

/**
 * A browser over inject. With `https`, requests arrive as from a TLS-terminating proxy on 127.0.0.1
 * (the gateway must trust it: startGateway({ trustProxy: ['127.0.0.1'] })), so Secure cookies are set.
 */
export function consoleClient(
  app: FastifyInstance,
  options: { https?: boolean; remoteAddress?: string; gw?: Gateway } = {},
): ConsoleClient {
  const cookies = new Map<string, string>();
  // Over "https" the socket is the proxy's (127.0.0.1) and the client's address comes in X-Forwarded-For.
  const headers = options.https
    ? { 'x-forwarded-proto': 'https', ...(options.remoteAddress ? { 'x-forwarded-for': options.remoteAddress } : {}) }
    : {};
  const remember = (res: LightMyRequestResponse) => {
    for (const c of res.cookies) {
      if (c.value === '' || (c.expires !== undefined && c.expires.getTime() <= Date.now())) cookies.delete(c.name);
      else cookies.set(c.name, c.value);
      // The session id (before its signature) is a secret: close() fails if it was stored or logged raw.
      if (/lg_console$/.test(c.name) && c.value) options.gw?.secrets.add(c.value.split('.')[0]!);
    }
    return res;
  };
  const common = () => ({
    headers,
    cookies: Object.fromEntries(cookies),
    ...(options.remoteAddress && !options.https ? { remoteAddress: options.remoteAddress } : {}),
  });
  const client: ConsoleClient = {
    cookies,
    get: async (url) => remember(await app.inject({ method: 'GET', url, ...common() })),
    async post(url, fields, csrfFrom = url) {
      const token = csrfFrom === null ? null : csrfTokenOf((await client.get(csrfFrom)).body);
      const form = new URLSearchParams({ ...fields, ...(token ? { _csrf: token } : {}) }).toString();
      const base = common();
      return remember(
        await app.inject({
          method: 'POST',
          url,
          payload: form,
          ...base,
          headers: { ...base.headers, 'content-type': 'application/x-www-form-urlencoded' },
        }),
      );
    },
    signIn: (name, password = PASSWORD) => client.post('/console/sign-in', { name, password }),
  };
  return client;
}
