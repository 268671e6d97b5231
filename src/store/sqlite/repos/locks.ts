// Locks of a unit of work in SQLite: none are needed, and none are taken.
import type { LockRepo } from '../../repos/locks.js';

/**
 * SQLite has one writer: the store runs its units one after the other on one connection (each unit's
 * reads and writes complete before the next unit starts, sqlite-store.ts), and another process (the
 * CLI) takes the file's write lock at BEGIN IMMEDIATE before it reads. What a lock would serialize is
 * serialized already.
 */
export function sqliteLockRepo(): LockRepo {
  return {
    persons: async () => {},
    integration: async () => {},
    legacyTags: async () => {},
    operatorNames: async () => {},
    webhookEndpoints: async () => {},
    // The store's one writer runs one unit at a time: a run never meets another inside the process, and
    // another process's run waits for the file's write lock, then finds less to do.
    tryRetention: async () => true,
  };
}
