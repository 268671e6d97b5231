// The answers engine (docs/api.md, "What happens to each answer"): mapping, coercion, provenance and the conflict rule.
import type { Repos } from '../store/store.js';
import type { Integration } from '../rules/catalog.js';
import { ANSWER_KEY_MAX_CHARS, type AnswersResult } from './schemas.js';
import type { AnswerOutcome } from '../store/repos/answers.js';
import { coerce, inexactNumberError } from '../lead/coerce.js';
import { writeField } from '../lead/field-write.js';
import type { FieldValue, Writer } from '../store/repos/field-values.js';
import { newId } from '../store/ids.js';
import { decideKept, type KeptRead } from './keep.js';

export const emptyAnswersResult = (): AnswersResult => ({
  written: [],
  unchanged: [],
  kept_existing: [],
  unmapped: [],
  invalid: [],
});

interface Applied {
  outcome: AnswerOutcome;
  error: string | null;
  fieldId: string | null;
}

/** Why a key cannot be an answer whatever its mapping, or null. */
function keyProblem(key: string): string | null {
  if (key === '') return 'an answer key must not be empty';
  if (key.length > ANSWER_KEY_MAX_CHARS)
    return `an answer key takes at most ${ANSWER_KEY_MAX_CHARS} characters (this one has ${key.length})`;
  return null;
}

/**
 * Whether an answer is unmapped or invalid whatever the lead holds: no mapping, a refused key or
 * number, or a value its field does not take. Decided from the request and the mapping alone.
 */
function notApplicable(integration: Integration, key: string, raw: unknown, inexact: ReadonlySet<string>): boolean {
  if (keyProblem(key) !== null || inexact.has(key)) return true;
  const mapping = integration.answers.get(key);
  return !mapping || !coerce(mapping.field, raw, mapping.values).ok;
}

/**
 * Starts the read of the kept counts of the answers that will be unmapped or invalid (keep.ts), when
 * there are any, without waiting for it: started before the unit's first awaited read, it goes out in
 * the same round trip on PostgreSQL. `applyAnswers` takes it as `kept`.
 */
export function readKept(
  tx: Repos,
  integration: Integration,
  answers: Record<string, unknown>,
  inexact: ReadonlySet<string> = new Set(),
): KeptRead | undefined {
  const keys = new Set(
    Object.entries(answers).flatMap(([key, raw]) => (notApplicable(integration, key, raw, inexact) ? [key] : [])),
  );
  if (keys.size === 0) return undefined;
  const counts = tx.answers.kept(integration.id, [...keys]);
  // Awaited by decideKept; a unit that fails first must not leave its failure unhandled.
  counts.catch(() => {});
  return { keys, counts };
}

/** One answer through the integration's mapping; `unmapped` when the key has none. */
async function applyOne(
  tx: Repos,
  integration: Integration,
  leadId: string,
  key: string,
  raw: unknown,
  at: string,
  known?: Map<string, FieldValue | null>,
): Promise<Applied> {
  const mapping = integration.answers.get(key);
  if (!mapping) return { outcome: 'unmapped', error: null, fieldId: null };
  const fieldId = mapping.field.id;
  const coerced = coerce(mapping.field, raw, mapping.values);
  if (!coerced.ok) return { outcome: 'invalid', error: coerced.error, fieldId };
  const writer: Writer = { kind: 'integration', ref: integration.id };
  const outcome = await writeField(
    tx,
    { leadId, fieldId, at },
    coerced.data,
    writer,
    mapping.policy === 'integration_wins',
    known,
  );
  return { outcome, error: null, fieldId };
}

/** The fields these answers map to: the values `applyAnswers` decides on, known before the unit starts. */
export const answerFieldIds = (integration: Integration, answers: Record<string, unknown>): string[] =>
  Object.keys(answers).flatMap((key) => integration.answers.get(key)?.field.id ?? []);

/**
 * Applies answers to a lead and stores them with their event, raw value and outcome: every written,
 * unchanged or kept one, and unmapped and invalid ones up to the caps of keep.ts (one past them is
 * still reported, and named in `not_kept`). Answers touch only custom fields: never stage, owner or tags.
 */
export async function applyAnswers(
  tx: Repos,
  integration: Integration,
  /**
   * `leadIsNew`: the lead was created in this unit, so it has no values yet and none is read; its
   * values after these answers (those written) are then added to `newLeadValues` when given.
   * `values`: the lead's stored values of the fields `answerFieldIds` names, as the caller read them
   * under the lead's lock (`holds`); read here when not given. `kept`: the kept counts `readKept`
   * started; read here when not given.
   */
  target: {
    leadId: string;
    submissionId: string;
    at: string;
    leadIsNew?: boolean;
    newLeadValues?: FieldValue[];
    values?: readonly FieldValue[];
    kept?: KeptRead | undefined;
  },
  answers: Record<string, unknown>,
  /** Keys whose number the request text holds more precisely than a JavaScript number can. */
  inexact: ReadonlySet<string> = new Set(),
): Promise<AnswersResult> {
  const result = emptyAnswersResult();
  // The stored values of every field these answers map to, read at once (the caller holds the lead's lock).
  const fieldIds = answerFieldIds(integration, answers);
  const known = new Map<string, FieldValue | null>(fieldIds.map((id) => [id, null]));
  const stored =
    target.leadIsNew || fieldIds.length === 0
      ? []
      : (target.values ?? (await tx.fieldValues.getMany(target.leadId, fieldIds)));
  for (const value of stored) if (known.has(value.fieldId)) known.set(value.fieldId, value);
  const outcomes: { key: string; raw: unknown; applied: Applied }[] = [];
  for (const [key, raw] of Object.entries(answers)) {
    // Checked before the mapping: an answer stored unmapped would otherwise be applied later, rounded.
    const refused = keyProblem(key) ?? (inexact.has(key) ? inexactNumberError(key) : null);
    const applied =
      refused !== null
        ? { outcome: 'invalid' as const, error: refused, fieldId: null }
        : await applyOne(tx, integration, target.leadId, key, raw, target.at, known);
    if (applied.outcome === 'invalid') result.invalid.push({ key, error: applied.error! });
    else result[applied.outcome].push(key);
    outcomes.push({ key, raw, applied });
  }
  // Unmapped and invalid answers are kept up to the caps (keep.ts); one past them is still reported.
  const unkept = outcomes.filter((o) => o.applied.outcome === 'unmapped' || o.applied.outcome === 'invalid');
  const kept = await decideKept(tx, integration.id, unkept, target.at, undefined, target.kept);
  const dropped = new Set(unkept.filter((_, i) => !kept[i]));
  if (dropped.size > 0) result.not_kept = [...dropped].map((o) => o.key);
  for (const answer of outcomes) {
    if (dropped.has(answer)) continue;
    const { key, raw, applied } = answer;
    await tx.answers.insert({
      id: newId(),
      submissionId: target.submissionId,
      integrationId: integration.id,
      leadId: target.leadId,
      key,
      raw,
      outcome: applied.outcome,
      error: applied.error,
      fieldId: applied.fieldId,
      createdAt: target.at,
      appliedAt: null,
      appliedOutcome: null,
    });
  }
  if (target.leadIsNew && target.newLeadValues)
    for (const value of known.values()) if (value !== null) target.newLeadValues.push(value);
  return result;
}

/**
 * Stored answers one application takes at most: each is a locked lead and a field write in one
 * transaction, so the bound keeps that transaction (and, on SQLite, the process's one thread) short.
 * What is left is counted in `remaining`; applying again takes the next ones.
 */
export const APPLY_STORED_MAX = 2_000;

export interface UnmappedApplication {
  applied: { answer_id: string; key: string; lead_id: string; outcome: AnswerOutcome; error: string | null }[];
  /** Stored answers whose key is still not mapped. */
  still_unmapped: number;
  /** Stored answers whose lead has been deleted since: set aside, never applied. */
  skipped_deleted_lead: number;
  /** Stored answers of a mapped key left for the next application (past APPLY_STORED_MAX). */
  remaining: number;
}

/**
 * Applies stored unmapped answers whose key has a mapping now, oldest first, under the same rules; at
 * most `max` of them.
 */
export async function applyStoredUnmapped(
  tx: Repos,
  integration: Integration,
  at: string,
  max = APPLY_STORED_MAX,
): Promise<UnmappedApplication> {
  const report: UnmappedApplication = { applied: [], still_unmapped: 0, skipped_deleted_lead: 0, remaining: 0 };
  const mapped = [...integration.answers.keys()];
  for (const answer of await tx.answers.listPendingUnmapped(integration.id, mapped, max)) {
    const lead = await tx.leads.lock(answer.leadId);
    if (!lead || lead.deletedAt !== null) {
      // Marked as dealt with: left waiting, it would stand at the head of every later application.
      await tx.answers.markApplied(
        answer.id,
        at,
        'invalid',
        null,
        'the lead was deleted before the answer could be applied',
      );
      report.skipped_deleted_lead++;
      continue;
    }
    const applied = await applyOne(tx, integration, answer.leadId, answer.key, answer.raw, at);
    await tx.answers.markApplied(answer.id, at, applied.outcome, applied.fieldId, applied.error);
    report.applied.push({
      answer_id: answer.id,
      key: answer.key,
      lead_id: answer.leadId,
      outcome: applied.outcome,
      error: applied.error,
    });
  }
  const left = await tx.answers.countPendingUnmapped(integration.id, mapped);
  report.still_unmapped = left.others;
  report.remaining = left.withKeys;
  return report;
}
