// The integration's id of a person, made by its legacy rule (`legacy.external_contact_id`, e.g.
// `telegram:{extra_data.telegram_id}`) from a legacy request's body or from a stored lead.
import type { Lead } from '../store/repos/leads.js';

/** `{first_name}`, `{phone}`, `{extra_data.telegram_id}` over a legacy body; null if a member is missing. */
export function renderTemplate(template: string, source: Record<string, unknown>): string | null {
  let missing = false;
  const out = template.replace(/\{([a-z_.]+)\}/g, (_, path: string) => {
    const value = path.split('.').reduce<unknown>((v, part) => (v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[part] : undefined), source);
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
