// The CLI's API mode: requests to a running gateway's admin API, and its answers turned into the CLI's
// exit codes (1 refused, 2 usage, 3 environment) with one line each.
import { EXIT, EnvironmentError, RefusedError, UsageError } from './exit.js';

/** How long one admin request may take, connecting included, before the CLI gives up (exit 3). */
export const ADMIN_REQUEST_TIMEOUT_MS = 15_000;

/**
 * Where the admin credential comes from, in order. Never the command line: an argument shows in `ps`
 * to every user of the host and stays in the shell's history.
 */
export const ADMIN_TOKEN_VARIABLES = ['LEAD_GATEWAY_ADMIN_TOKEN', 'ADMIN_TOKEN'] as const;

export interface AdminClient {
  /** The gateway's base URL, as the line on stderr names it. */
  readonly base: string;
  get<T>(path: string, query?: Record<string, string | number | undefined>): Promise<T>;
  post<T>(path: string, body: unknown): Promise<T>;
  put<T>(path: string, body: unknown): Promise<T>;
  patch<T>(path: string, body: unknown): Promise<T>;
  delete<T>(path: string, body: unknown): Promise<T>;
}

/** The base URL of a gateway: http or https, with no credentials, query or fragment in it. */
export function gatewayBase(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`--url / LEAD_GATEWAY_URL: "${url}" is not a URL (e.g. https://gateway.internal:3000)`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new UsageError(`--url / LEAD_GATEWAY_URL: use an http or https URL, not ${parsed.protocol}`);
  if (parsed.username || parsed.password)
    throw new UsageError(
      '--url / LEAD_GATEWAY_URL: a URL carries no credentials; the admin token comes from LEAD_GATEWAY_ADMIN_TOKEN',
    );
  if (parsed.search || parsed.hash)
    throw new UsageError('--url / LEAD_GATEWAY_URL: give the base URL only, without ? or #');
  // A gateway behind a proxy may live under a path; the admin paths go below it.
  return `${parsed.origin}${parsed.pathname.replace(/\/+$/, '')}`;
}

/** The admin token from the environment, and the variable it came from. */
export function adminTokenFrom(env: Record<string, string | undefined>): { token: string; variable: string } {
  for (const variable of ADMIN_TOKEN_VARIABLES) {
    const token = env[variable];
    if (token) return { token, variable };
  }
  throw new EnvironmentError(
    'no admin token: set LEAD_GATEWAY_ADMIN_TOKEN (or ADMIN_TOKEN) in the environment to your admin token (never on the command line)',
  );
}

interface Problem {
  status?: number;
  detail?: string;
  code?: string;
}

const isProblem = (body: unknown): body is Problem =>
  typeof body === 'object' && body !== null && typeof (body as Problem).detail === 'string';

export interface ClientOptions {
  timeoutMs?: number;
  /** Called once, at the gateway's first successful answer. */
  onAnswer?: () => void;
}

export function adminClient(
  base: string,
  credential: { token: string; variable: string },
  options: ClientOptions = {},
): AdminClient {
  const timeoutMs = options.timeoutMs ?? ADMIN_REQUEST_TIMEOUT_MS;
  let answered = false;
  async function request<T>(
    method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    path: string,
    body?: unknown,
  ): Promise<T> {
    const url = `${base}/admin/v1${path}`;
    const changes = method !== 'GET';
    // A change whose answer was lost may have been made all the same: the audit log tells.
    const unsure = changes ? '; the change may or may not have been made: check with `audit`' : '';
    let response: Response;
    let text: string;
    try {
      response = await fetch(url, {
        method,
        headers: {
          authorization: `Bearer ${credential.token}`,
          accept: 'application/json',
          ...(changes ? { 'content-type': 'application/json' } : {}),
        },
        ...(changes ? { body: JSON.stringify(body ?? {}) } : {}),
        redirect: 'manual',
        signal: AbortSignal.timeout(timeoutMs),
      });
      text = await response.text();
    } catch (error) {
      const e = error as Error & { cause?: { code?: string; message?: string } };
      if (e.name === 'TimeoutError')
        throw new EnvironmentError(`${base}: no answer within ${timeoutMs / 1000} s${unsure}`);
      const cause = e.cause?.code ?? e.cause?.message ?? e.message;
      throw new EnvironmentError(`${base}: cannot reach the gateway (${cause})`);
    }
    const type = response.headers.get('content-type') ?? 'no content type';
    let parsed: unknown = undefined;
    if (/\bjson\b/.test(type) && text !== '') {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
    }
    const status = response.status;
    // 204 (a webhook endpoint deleted) has no body by definition: null stands for it.
    if (status === 204 || (status >= 200 && status < 300 && parsed !== undefined)) {
      if (!answered) options.onAnswer?.();
      answered = true;
      return (parsed ?? null) as T;
    }
    const detail = isProblem(parsed) ? parsed.detail : undefined;
    // Redirects are not followed: the token would go to wherever they point.
    if (status >= 300 && status < 400)
      throw new EnvironmentError(
        `${url} redirects (${status}) to ${response.headers.get('location') ?? 'nowhere'}: give --url the gateway's own base URL`,
      );
    if (status === 401) {
      throw new EnvironmentError(
        `${base} refused the admin token from ${credential.variable} (401): set LEAD_GATEWAY_ADMIN_TOKEN (or ADMIN_TOKEN) to a valid admin token`,
      );
    }
    const retry = response.headers.get('retry-after');
    const later = retry ? ` (retry after ${retry} s)` : '';
    if (status === 429 || status >= 500)
      throw new EnvironmentError(
        `${base}: the gateway answered ${status}${detail ? `: ${detail}` : ''}${later}${status >= 500 ? unsure : ''}`,
      );
    if (detail === undefined) {
      // Not the gateway's admin API: another server, a proxy's page, or a wrong base path.
      throw new EnvironmentError(
        `${url} answered ${status} (${type}), not the admin API: is ${base} the gateway's base URL?`,
      );
    }
    // As in database mode, the gateway's refusals are exit 1; a value outside the API's schema is usage.
    throw new RefusedError(detail, status === 400 || status === 422 ? EXIT.usage : EXIT.refused);
  }

  return {
    base,
    get: <T>(path: string, query: Record<string, string | number | undefined> = {}) => {
      const q = new URLSearchParams(
        Object.entries(query).flatMap(([k, v]): [string, string][] => (v === undefined ? [] : [[k, String(v)]])),
      );
      return request<T>('GET', q.size > 0 ? `${path}?${q}` : path);
    },
    post: <T>(path: string, body: unknown) => request<T>('POST', path, body),
    put: <T>(path: string, body: unknown) => request<T>('PUT', path, body),
    patch: <T>(path: string, body: unknown) => request<T>('PATCH', path, body),
    delete: <T>(path: string, body: unknown) => request<T>('DELETE', path, body),
  };
}
