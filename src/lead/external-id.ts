// The integration's id of a person, made by its legacy rule (`legacy.external_contact_id`, e.g.
// `telegram:{extra_data.telegram_id}`) from a legacy request's body or from a stored lead.
import type { Lead, PersonIdMember, PersonIdTemplate } from '../store/repos/leads.js';

const MEMBER = /\{([a-z_.]+)\}/g;

/** `{first_name}`, `{phone}`, `{extra_data.telegram_id}` over a legacy body; null if a member is missing. */
export function renderTemplate(template: string, source: Record<string, unknown>): string | null {
  let missing = false;
  const out = template.replace(MEMBER, (_, path: string) => {
    const value = path
      .split('.')
      .reduce<unknown>(
        (v, part) => (v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[part] : undefined),
        source,
      );
    if ((typeof value !== 'string' && typeof value !== 'number') || String(value).trim() === '') {
      missing = true;
      return '';
    }
    return String(value).trim();
  });
  return missing ? null : out;
}

/** The person id of a stored legacy lead by the integration's template; null when a member is missing. */
export function renderExternalId(template: string, lead: Lead): string | null {
  return renderTemplate(template, {
    id: lead.id,
    first_name: lead.firstName,
    last_name: lead.lastName,
    phone: lead.phone,
    email: lead.email,
    extra_data: lead.extraData ?? {},
  });
}

const COLUMNS = new Set(['id', 'first_name', 'last_name', 'phone', 'email']);

/**
 * The template as the store makes a lead's id from it in a statement (`leads.unlinkedLegacyOf`): its text
 * and the members `renderExternalId` reads. Null when a member names nothing a stored lead has a string
 * or a number at (`{notes}`, `{extra_data}`, `{phone.x}`): no lead has an id by it.
 */
export function personIdTemplate(template: string): PersonIdTemplate | null {
  const literals: string[] = [];
  const members: PersonIdMember[] = [];
  let at = 0;
  for (const match of template.matchAll(MEMBER)) {
    literals.push(template.slice(at, match.index));
    at = match.index + match[0].length;
    const [head, ...rest] = match[1]!.split('.');
    if (rest.length === 0 && COLUMNS.has(head!))
      members.push({ column: head as 'id' | 'first_name' | 'last_name' | 'phone' | 'email' });
    else if (head === 'extra_data' && rest.length > 0) members.push({ extraData: rest });
    else return null;
  }
  literals.push(template.slice(at));
  return { literals, members };
}
