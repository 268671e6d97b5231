// Rendering a console page: the layout's common data (who is signed in, the sign-out form's CSRF
// token) and the error page every failure of a console route becomes.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError, problemCatalogue, type ProblemCode } from '../errors.js';
import { StoreUnavailableError } from '../store/store.js';
import type { StoreOutage } from '../outage.js';
import type { Viewer } from './users.js';
import { viewHelpers } from './view-data.js';

/**
 * The signed-in person, or null. Only an explicit null workspace means the service team: a session
 * that lacks the value (however it came to be) sees nothing rather than everything.
 */
export function viewerOf(request: Pick<FastifyRequest, 'session'>): Viewer | null {
  const session = request.session as Partial<FastifyRequest['session']> | undefined;
  if (!session?.user || session.workspace === undefined) return null;
  return { name: session.user, workspace: session.workspace };
}

/** What every page is given: the view's own data, the signed-in person, the CSRF token of its forms and the view helpers (`it.fmt`, view-data.ts). */
function pageData(reply: FastifyReply, data: Record<string, unknown>): Record<string, unknown> {
  const csrf = 'csrf' in data ? data.csrf : reply.generateCsrf();
  return { viewer: viewerOf(reply.request), fmt: viewHelpers, ...data, csrf };
}

/** A page, rendered and sent. */
export function render(reply: FastifyReply, template: string, data: Record<string, unknown>): FastifyReply {
  return reply.type('text/html; charset=utf-8').view(template, pageData(reply, data));
}

/** A page rendered and not yet sent: for a page that changes something once it has rendered (flash.ts). */
export async function rendered(reply: FastifyReply, template: string, data: Record<string, unknown>): Promise<string> {
  return reply.viewAsync(template, pageData(reply, data));
}

/** What a person is told of a failure: the problem catalogue's code and words, as the API would answer; a 5xx is logged and masked. */
function describe(error: Error & { statusCode?: number; code?: string }): {
  status: number;
  code: ProblemCode;
  title: string;
  detail: string;
  headers: Record<string, string>;
} {
  if (error instanceof AppError)
    return {
      status: error.status,
      code: error.code,
      title: problemCatalogue[error.code].title,
      detail: error.message,
      headers: error.headers,
    };
  if (error instanceof StoreUnavailableError) {
    // As the API answers it: the store did not answer (a lock held too long, a lost connection) and
    // nothing of the request stands, so the person may simply send it again.
    return {
      status: 503,
      code: 'service-unavailable',
      title: problemCatalogue['service-unavailable'].title,
      detail: 'The database did not answer in time; nothing was changed. Try again in a moment.',
      headers: { 'retry-after': '1' },
    };
  }
  if (error.code === 'FST_CSRF_INVALID_TOKEN' || error.code === 'FST_CSRF_MISSING_SECRET') {
    return {
      status: 403,
      code: 'forbidden',
      title: problemCatalogue.forbidden.title,
      detail:
        'The form was sent without its security token, or with an old one. Go back, reload the page and send it again.',
      headers: {},
    };
  }
  const status = error.statusCode ?? 500;
  if (status === 413)
    return {
      status,
      code: 'payload-too-large',
      title: problemCatalogue['payload-too-large'].title,
      detail: 'The form is larger than the console takes.',
      headers: {},
    };
  if (status === 415)
    return {
      status,
      code: 'unsupported-media-type',
      title: problemCatalogue['unsupported-media-type'].title,
      detail: 'Console forms are sent as application/x-www-form-urlencoded.',
      headers: {},
    };
  if (status >= 400 && status < 500)
    return {
      status: 400,
      code: 'bad-request',
      title: problemCatalogue['bad-request'].title,
      detail: 'The console could not read this request.',
      headers: {},
    };
  return {
    status: 500,
    code: 'internal',
    title: problemCatalogue.internal.title,
    detail: 'Something failed on our side.',
    headers: {},
  };
}

/** `outage` logs a store failure as one episode with the API's (outage.ts); a fault of the console is logged every time. */
export function renderError(
  reply: FastifyReply,
  request: FastifyRequest,
  error: Error,
  outage: StoreOutage,
): FastifyReply {
  const problem = describe(error);
  if (error instanceof StoreUnavailableError) {
    outage.refused(error, request.log);
  } else if (problem.status >= 500) {
    request.log.error({ err: error }, 'console request failed');
    problem.detail = `Something failed on our side; the log has it under request ${request.id}.`;
  }
  // The sign-out form needs a CSRF token; a page for nobody signed in sets no cookie.
  const csrf = viewerOf(request) === null ? { csrf: null } : {};
  return render(reply.code(problem.status).headers(problem.headers), 'error', {
    title: problem.title,
    status: problem.status,
    code: problem.code,
    detail: problem.detail,
    ...csrf,
  });
}
