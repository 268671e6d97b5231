// Rules on every replica. Each process reads its own rules folder (its own disk or ConfigMap) and
// records the version it runs where the others see it (the store's replica set). A reload asked of one
// replica (the admin API) is made by every live replica, each from its own folder, and the answer waits
// a bounded time for theirs. Replicas on different versions are drift: told once in the log when it
// begins, and shown by /readyz, /metrics and GET /admin/v1/replicas. SIGHUP reloads the one process
// that got it (an orchestrator signals each process after changing its files), and records it too.
import type { ReplicaRecord, ReplicaSet, RulesRecord } from '../store/replicas.js';
import type { RulesHolder } from './loader.js';

/** How long a reload through the admin API waits for every live replica to answer. */
export const RELOAD_ANSWER_TIMEOUT_MS = 5_000;
const ANSWER_POLL_MS = 20;
/** How often each replica looks for drift on its own, so the log tells it without any probe asking. */
export const DRIFT_CHECK_MS = 10_000;
/**
 * How long drift must last before a replica's own look logs it: replicas part-way through a reload
 * differ for some milliseconds. The replica that asked for the reload looks once all have answered,
 * and logs at once.
 */
const DRIFT_SETTLE_MS = 2_000;
/** How long one look at the live replicas serves /readyz and /metrics (probes may come many a second). */
const SURVEY_REUSE_MS = 1_000;

export interface RulesLog {
  warn(details: Record<string, unknown>, message: string): void;
  info(details: Record<string, unknown>, message: string): void;
  error(details: Record<string, unknown>, message: string): void;
}

/** The live replicas, and the distinct versions of rules among those that run rules. */
export interface Survey {
  replicas: ReplicaRecord[];
  self: string;
  versions: string[];
  drift: boolean;
}

export type ReloadOutcome = 'reloaded' | 'failed' | 'no-answer';

export interface ReloadReport extends Survey {
  /** This replica's own reload. */
  here: { ok: true; version: string } | { ok: false; problems: string[] };
  outcomes: Map<string, ReloadOutcome>;
}

export interface RulesAcrossReplicas {
  /** Reloads this process's rules only (SIGHUP), logs and records the outcome. */
  reloadHere(trigger: string): Promise<{ ok: true; version: string } | { ok: false; problems: string[] }>;
  /** Reloads here and asks every live replica to reload its own folder; their answers, or none in time. */
  reloadEverywhere(): Promise<ReloadReport>;
  /** The live replicas now. */
  survey(): Promise<Survey>;
  /** The last survey, at most a second old; null when the database cannot be asked. */
  recentSurvey(): Promise<Survey | null>;
  close(): void;
}

const distinctVersions = (replicas: ReplicaRecord[]): string[] =>
  [...new Set(replicas.flatMap((r) => (r.rules ? [r.rules.version] : [])))].sort();

/** The live replicas as recorded, seen from the process `replicas` belongs to. */
export async function listReplicas(replicas: ReplicaSet): Promise<Survey> {
  const live = await replicas.live();
  const versions = distinctVersions(live);
  return { replicas: live, self: replicas.self, versions, drift: versions.length > 1 };
}

/** What a replica answered to request `n`, from its record. */
const outcomeOf = (replica: ReplicaRecord, request: number): ReloadOutcome =>
  replica.answered < request ? 'no-answer' : replica.rules?.reloadError ? 'failed' : 'reloaded';

/** Starts recording the rules of this process and answering reloads asked by other replicas. */
export async function shareRules(deps: {
  replicas: ReplicaSet;
  rules: RulesHolder;
  log?: RulesLog;
}): Promise<RulesAcrossReplicas> {
  const { replicas, rules, log } = deps;
  let reloadError: RulesRecord['reloadError'] = null;
  const record = (): RulesRecord => ({ ...rules.version(), reloadError });

  const reload = (trigger: string, request?: number) => {
    const result = rules.reload();
    if (result.ok) {
      reloadError = null;
      log?.info({ rules_version: result.version, trigger }, 'rules reloaded');
    } else {
      reloadError = { at: new Date().toISOString(), problems: result.problems };
      log?.error(
        { problems: result.problems, rules_version: rules.version().version, trigger },
        'rules reload failed; the previous rules stay in force',
      );
    }
    return { result, written: replicas.record(record(), request) };
  };

  let drifting = false;
  let driftSince: number | null = null;
  const survey = async (settled = false): Promise<Survey> => {
    const now = await listReplicas(replicas);
    const { replicas: live, versions, drift } = now;
    driftSince = drift ? (driftSince ?? Date.now()) : null;
    if (drift && !drifting && (settled || Date.now() - driftSince! >= DRIFT_SETTLE_MS)) {
      drifting = true;
      log?.warn(
        {
          rules_versions: versions,
          replicas: live.filter((r) => r.rules).map((r) => ({ id: r.id, rules_version: r.rules!.version })),
        },
        'rules drift: live replicas run different rules (a rolling update, or a folder not updated on every replica)',
      );
    } else if (!drift && drifting) {
      drifting = false;
      log?.info({ rules_versions: versions }, 'rules drift ended: every live replica runs the same rules');
    }
    return now;
  };

  let recent: { at: number; survey: Promise<Survey | null> } | null = null;
  const recentSurvey = () => {
    if (recent === null || Date.now() - recent.at > SURVEY_REUSE_MS)
      recent = { at: Date.now(), survey: survey().catch(() => null) };
    return recent.survey;
  };

  replicas.onReloadAsked((request) => {
    recent = null;
    void reload(`asked by another replica (request ${request})`, request).written;
  });
  await replicas.record(record());
  const watch = setInterval(() => void recentSurvey(), DRIFT_CHECK_MS);
  watch.unref();

  return {
    async reloadHere(trigger) {
      const { result, written } = reload(trigger);
      await written;
      recent = null;
      return result;
    },
    async reloadEverywhere() {
      let request: number;
      try {
        request = await replicas.askReload();
      } catch (error) {
        // The others cannot be asked (the database is down): this replica reloads all the same, and
        // the caller is told to retry, which asks them again.
        await reload('admin API').written;
        throw error;
      }
      const { result, written } = reload('admin API', request);
      await written;
      const deadline = Date.now() + RELOAD_ANSWER_TIMEOUT_MS;
      // Replicas part-way through the reload differ for a moment: only the last look may tell drift.
      const answered = (look: Survey) =>
        look.replicas.every((r) => !r.rules || r.id === look.self || r.answered >= request);
      while (!answered(await listReplicas(replicas)) && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, ANSWER_POLL_MS));
      let now = await survey(true);
      recent = null;
      // This replica's own record is the one in memory (its row may wait behind a feed reconnecting).
      now = {
        ...now,
        replicas: now.replicas.map((r) =>
          r.id === now.self ? { ...r, rules: record(), answered: Math.max(r.answered, request) } : r,
        ),
      };
      const outcomes = new Map(
        now.replicas
          .filter((r) => r.rules)
          .map((r) => [r.id, r.id === now.self ? (result.ok ? 'reloaded' : 'failed') : outcomeOf(r, request)] as const),
      );
      const silent = [...outcomes].filter(([, o]) => o === 'no-answer').map(([id]) => id);
      if (silent.length > 0)
        log?.warn(
          { replicas: silent, waited_ms: RELOAD_ANSWER_TIMEOUT_MS, request },
          'rules reload: these replicas did not answer in time',
        );
      return { ...now, here: result, outcomes };
    },
    survey: () => survey(),
    recentSurvey,
    close() {
      clearInterval(watch);
      replicas.onReloadAsked(null);
    },
  };
}
