// What is kept of the answers no mapping takes (unmapped) or no field accepts (invalid): bounded per
// integration, so that a bot sending random keys cannot fill the database (docs/api.md, "Unmapped and
// invalid answers kept").
import type { Repos } from '../store/store.js';
import { answerBytes, type KeptAnswers, type KeptIncrement } from '../store/repos/answers.js';

/** Distinct keys whose unmapped or invalid answers an integration keeps; an answer of a further key is not kept. */
export const KEPT_KEYS_PER_INTEGRATION = 1_000;
/** Unmapped or invalid answers kept per key: enough to apply a new mapping to, and to see what a bot sends. */
export const KEPT_ANSWERS_PER_KEY = 1_000;
/** Bytes (key and value as JSON, UTF-8) of the unmapped and invalid answers an integration keeps: 16 MiB. */
export const KEPT_BYTES_PER_INTEGRATION = 16 * 1_048_576;

export interface KeepCaps {
  keys: number;
  perKey: number;
  bytes: number;
}

export const KEEP_CAPS: KeepCaps = {
  keys: KEPT_KEYS_PER_INTEGRATION,
  perKey: KEPT_ANSWERS_PER_KEY,
  bytes: KEPT_BYTES_PER_INTEGRATION,
};

/** The kept counts of some keys, read before they are needed (a statement started, not yet awaited). */
export interface KeptRead {
  keys: ReadonlySet<string>;
  counts: Promise<KeptAnswers>;
}

/** One answer to keep or not, in the request's order. */
export interface KeepCandidate {
  key: string;
  raw: unknown;
}

/**
 * Decides which of a unit's unmapped and invalid answers are kept: in the request's order, each while
 * its key, the integration's keys and its bytes are under the caps. One read of the counts, whatever
 * the number of answers; the counts move in the same unit as the answers stored. Returns, per
 * candidate, whether it is kept.
 *
 * On PostgreSQL two units of one integration may read the counts at once and both keep: the caps may
 * then be passed by the answers of the units running together, never more.
 */
export async function decideKept(
  tx: Repos,
  integrationId: string,
  candidates: readonly KeepCandidate[],
  at: string,
  caps: KeepCaps = KEEP_CAPS,
  /** The counts as read already for these keys (`readKept`, answers/engine.ts); read here when absent or not for all of them. */
  early?: KeptRead,
): Promise<boolean[]> {
  if (candidates.length === 0) return [];
  const asked = [...new Set(candidates.map((c) => c.key))];
  const counts =
    early && asked.every((key) => early.keys.has(key))
      ? await early.counts
      : await tx.answers.kept(integrationId, asked);
  let keys = counts.keys;
  let bytes = counts.bytes;
  const increments = new Map<string, KeptIncrement>();
  let notKept = 0;
  const decisions = candidates.map((c) => {
    const size = answerBytes(c.key, c.raw);
    const held = counts.perKey.get(c.key) ?? 0;
    const keep = bytes + size <= caps.bytes && (held > 0 ? held < caps.perKey : keys < caps.keys);
    if (!keep) {
      notKept++;
      return false;
    }
    if (held === 0) keys++;
    counts.perKey.set(c.key, held + 1);
    bytes += size;
    let entry = increments.get(c.key);
    if (!entry) increments.set(c.key, (entry = { integrationId, key: c.key, answers: 0, bytes: 0 }));
    entry.answers++;
    entry.bytes += size;
    return true;
  });
  await tx.answers.addKept([...increments.values()]);
  if (notKept > 0) await tx.answers.addNotKept(integrationId, notKept, at);
  return decisions;
}
