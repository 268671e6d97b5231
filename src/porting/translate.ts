// Translating a legacy lead into a v1 submission: person id, tags and data into answers, ignored members.
import type { Integration } from '../rules/catalog.js';
import type { LegacyLeadCreate } from './legacy-lead.js';
import { AppError } from '../errors.js';
import { renderTemplate } from '../lead/external-id.js';

/** Members the gateway translates; any other member of a legacy lead is ignored and counted. */
const TRANSLATED = new Set(['first_name', 'last_name', 'phone', 'email', 'notes', 'source', 'tag_ids', 'extra_data']);

export interface Translation {
  externalContactId: string | null;
  metadata: Record<string, unknown> | null;
  answers: Record<string, unknown>;
  /** Answer keys whose value came from an extra_data number the request text holds more precisely. */
  inexactAnswers: Set<string>;
  /** Member names ignored (stage, assigned_to, unknown ones), and `tag:<name>` for tags without a rule. */
  ignored: string[];
}

/** Tags and data keys become answers through the integration's legacy rules (docs/legacy-api.md, docs/rules.md). */
export function answersFromLegacy(
  integration: Integration,
  tagNames: readonly string[],
  data: Record<string, unknown>,
  inexactData: ReadonlySet<string> = new Set(),
): { answers: Record<string, unknown>; inexactAnswers: Set<string>; ignored: string[] } {
  const answers: Record<string, unknown> = {};
  const inexactAnswers = new Set<string>();
  const ignored: string[] = [];
  for (const name of tagNames) {
    const rule = integration.legacy.tags.get(name);
    if (rule) answers[rule.answer] = rule.value;
    else ignored.push(`tag:${name}`);
  }
  for (const [key, value] of Object.entries(data)) {
    const answerKey = integration.legacy.data.get(key);
    if (answerKey === undefined) continue;
    answers[answerKey] = value;
    if (inexactData.has(key)) inexactAnswers.add(answerKey);
    else inexactAnswers.delete(answerKey);
  }
  return { answers, inexactAnswers, ignored };
}

/**
 * A member the person id is made of must arrive exactly: `telegram:{extra_data.telegram_id}` with a
 * telegram_id of 12345678901234567891 would become ...900 and bind the lead to another person.
 */
function refuseInexactIdMembers(template: string, inexactData: ReadonlySet<string>): void {
  for (const [, path] of template.matchAll(/\{extra_data\.([a-z_]+)\}/g)) {
    if (!inexactData.has(path!)) continue;
    const message =
      'is a number JavaScript cannot carry exactly, and it makes the person id (legacy.external_contact_id); send it as a string';
    throw new AppError('validation-failed', `/extra_data/${path}: ${message}`, {
      errors: [{ path: `/extra_data/${path}`, message }],
    });
  }
}

export function translateLegacyLead(
  integration: Integration,
  body: LegacyLeadCreate,
  tagNames: readonly string[],
  inexactData?: ReadonlySet<string>,
): Translation {
  const extra = body.extra_data ?? {};
  const template = integration.legacy.externalContactId;
  if (template !== null && inexactData) refuseInexactIdMembers(template, inexactData);
  const { answers, inexactAnswers, ignored } = answersFromLegacy(integration, tagNames, extra, inexactData);
  const metadata = { ...extra, ...(body.source ? { source_key: body.source } : {}) };
  return {
    externalContactId: template === null ? null : renderTemplate(template, body),
    metadata: Object.keys(metadata).length > 0 ? metadata : null,
    answers,
    inexactAnswers,
    ignored: [...Object.keys(body).filter((k) => !TRANSLATED.has(k)), ...ignored],
  };
}
