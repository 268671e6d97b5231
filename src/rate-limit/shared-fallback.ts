// Whether one shared counter reaches its rows: each counter has its own, so a failure of one never
// changes how the other counts.

/** What the fallback logs to: the gateway's pino logger. */
export interface LimiterLog {
  warn(fields: object, message: string): void;
}

/** The two warn lines of a counter: when it starts counting alone, and when it counts across replicas again. */
export interface FallbackLines {
  unreachable: string;
  reachable: string;
}

/**
 * The quota's lines. A failed authentication's count and the quota's are apart: a burst of bad keys that
 * makes the failures' counts wait must not make every integration's quota count alone.
 */
export const QUOTA_LINES: FallbackLines = {
  unreachable:
    'shared rate limits unreachable: this replica counts alone until the database answers (allowing its share of each limit)',
  reachable: 'shared rate limits reachable again: counting across all replicas',
};

export const AUTH_FAILURES_LINES: FallbackLines = {
  unreachable:
    'shared failed-authentication counts unreachable: this replica counts failed authentications alone until the database answers',
  reachable: 'shared failed-authentication counts reachable again: counting across all replicas',
};

export interface FallbackOptions {
  /** The table named in the lines. */
  table: string;
  retryMs: number;
  /** The live replicas this process last saw. */
  replicasSeen: () => number;
  lines: FallbackLines;
}

/**
 * Whether a counter's shared rows are in use. Every replica falls back on its own: one warn line when
 * it starts counting alone, one when the database answers again (not one per request). While down,
 * one request every `retryMs` probes the database and the others skip it, so a database that hangs
 * costs one timeout per retry period instead of one per request.
 */
export function createFallback(log: LimiterLog, { table, retryMs, replicasSeen, lines }: FallbackOptions) {
  let down = false;
  let retryAt = 0;
  const recovered: (() => void)[] = [];
  return {
    replicasSeen,
    isDown: () => down,
    /** Runs `then` each time the database answers again after the fallback. */
    onRecovered(then: () => void): void {
      recovered.push(then);
    },
    /** The database is skipped now: counted locally without trying it. */
    skipShared(): boolean {
      return down && Date.now() < retryAt;
    },
    /** Marks a call as the probe when the database was down; the others keep skipping it meanwhile. */
    startCall(): boolean {
      if (!down) return false;
      retryAt = Date.now() + retryMs;
      return true;
    },
    succeeded(probe: boolean): void {
      // A call that started before the failure and answered late says nothing about now: only a probe recovers.
      if (!probe || !down) return;
      down = false;
      log.warn({ table }, lines.reachable);
      for (const then of recovered) then();
    },
    failed(error: unknown): void {
      retryAt = Date.now() + retryMs;
      if (down) return;
      down = true;
      log.warn({ err: error, table, retry_every_s: retryMs / 1000, live_replicas: replicasSeen() }, lines.unreachable);
    },
  };
}

export type Fallback = ReturnType<typeof createFallback>;
