// The gateway processes on one database as each records itself, and the reloads of rules they ask of
// each other (src/rules/replicas.ts decides; this is what the engines keep). PostgreSQL: the `replicas`
// table and a notification to every process (postgres/replica-set.ts). An engine of one file serves
// one process: it answers with that process alone (aloneReplicaSet).
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';

/** The rules a process runs, as it records them for the others to see. */
export interface RulesRecord {
  /** The version (a hash of the files) of the rules in force. */
  version: string;
  /** When the rules in force were loaded (ISO 8601). */
  loadedAt: string;
  /** The last reload, if it failed (the previous rules stayed in force); null after one that succeeded. */
  reloadError: { at: string; problems: string[] } | null;
}

/** One process as recorded on the database. */
export interface ReplicaRecord {
  id: string;
  /** Null for a process of a release that did not record them. */
  host: string | null;
  pid: number | null;
  startedAt: string | null;
  heartbeatAt: string;
  /** Null for a process that runs no rules (a CLI command) or of a release that did not record them. */
  rules: RulesRecord | null;
  /** The newest reload request this process answered (see ReplicaSet.askReload). */
  answered: number;
}

export interface ReplicaSet {
  /** This process's id among the others. */
  readonly self: string;
  /**
   * Records the rules this process runs, and that it answered reload request `answered`: written now
   * (PostgreSQL: on the change feed's connection) and again whenever the process registers anew.
   */
  record(rules: RulesRecord, answered?: number): Promise<void>;
  /**
   * What this process does when another asks every process to reload (null: nothing). A process that
   * missed requests while it was not connected is told of the newest one when it connects again.
   */
  onReloadAsked(handler: ((request: number) => void) | null): void;
  /** Asks every other live process to reload its rules; answers the request's number, which grows. */
  askReload(): Promise<number>;
  /** The processes alive now (a heartbeat within the last seconds), this one included, by id. */
  live(): Promise<ReplicaRecord[]>;
}

/** A process id: host, pid and a few random bytes, so a pid reused after a restart is a new process. */
export const newReplicaId = (): string => `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;

/** The process start, for the record (the uptime counted back from now). */
export const processStartedAt = (): string => new Date(Date.now() - process.uptime() * 1000).toISOString();

/** This process alone: what a store of one file (or one without a change feed) answers. */
export function aloneReplicaSet(): ReplicaSet {
  const self = newReplicaId();
  const startedAt = processStartedAt();
  let rules: RulesRecord | null = null;
  let answered = 0;
  let requests = 0;
  return {
    self,
    async record(next, request) {
      rules = next;
      answered = Math.max(answered, request ?? 0);
    },
    onReloadAsked: () => {},
    askReload: async () => ++requests,
    live: async () => [
      {
        id: self,
        host: hostname(),
        pid: process.pid,
        startedAt,
        heartbeatAt: new Date().toISOString(),
        rules,
        answered,
      },
    ],
  };
}
