// Which v1 request replaces each deprecated one (docs/migration.md, "The call that replaces each old call"), for the 403 after switch-off and the docs.

export interface Replacement {
  /** The v1 call to use instead, or null when there is none. */
  method: string | null;
  path: string | null;
  advice: string;
}

const LEADS = '/api/integrations/v1/leads/';
const ANSWERS = '/api/integrations/v1/leads/answers/';

/** Finds the replacement of a legacy request by method and path below /api/bots/api/. */
export function replacementFor(method: string, legacyPath: string): Replacement {
  const path = legacyPath.replace(/^\/api\/bots\/api/, '').replace(/\/+$/, '') || '/';
  if (method === 'POST' && path === '/leads') {
    return { method: 'POST', path: LEADS, advice: `Send POST ${LEADS} with an event_id and your external_contact_id.` };
  }
  if ((method === 'PATCH' || method === 'PUT') && /^\/leads\/[^/]+$/.test(path)) {
    return {
      method: 'POST',
      path: ANSWERS,
      advice: `Send the tag or data as answers: POST ${ANSWERS}, keyed by the person's external_contact_id.`,
    };
  }
  if (path.startsWith('/tags')) {
    return {
      method: null,
      path: null,
      advice: 'Not needed: tags come from the integration settings; send facts as answers.',
    };
  }
  if (method === 'GET' || method === 'HEAD') {
    // Reading a lead's comments too: a read, whatever it reads.
    return { method: null, path: null, advice: 'Not needed: on the v1 interface the bot reads nothing.' };
  }
  return {
    method: null,
    path: null,
    advice:
      'Not available in the v1 interface (moving a lead, adding a comment or a payment, and DELETE are done in the service).',
  };
}
