// Locks of a unit of work in PostgreSQL: transaction-level advisory locks, released at COMMIT or ROLLBACK.
import {
  OPERATOR_NAMES_LOCK,
  WEBHOOK_ENDPOINTS_LOCK,
  integrationLockName,
  legacyTagsLockName,
  personLockNames,
  retentionLockName,
  type LockRepo,
} from '../../repos/locks.js';
import { statement, type Sql } from '../sql.js';

/**
 * One round trip for all of a unit's keys. Each name becomes a 64-bit lock id on the server
 * (hashtextextended); the ids are locked in ascending order, so two units asking for overlapping sets
 * take their common locks in the same order and never deadlock. The order holds: the plan is an
 * Aggregate over Unique over Sort (EXPLAIN VERBOSE, PostgreSQL 15), so count() calls the volatile
 * pg_advisory_xact_lock on the sorted ids, one after the other. Person, integration and migration
 * locks share one 64-bit id space: two names whose hashes collide (about 2^-64 a pair) make units
 * wait for each other, and at worst deadlock, which PostgreSQL detects (40P01) and the store runs
 * again; never a wrong result.
 *
 * The lock is a statement of its own: a READ COMMITTED statement reads the data as of its start, so the
 * reads the lock protects must come after it, not in the same statement.
 */
const lockAll = statement(
  'locks.all',
  `SELECT count(pg_advisory_xact_lock(id)) FROM (SELECT DISTINCT hashtextextended(name, 0) AS id FROM unnest($1::text[]) AS name ORDER BY 1) AS ids`,
);
const lockOne = statement('locks.one', 'SELECT pg_advisory_xact_lock(hashtextextended($1, 0))');
const tryOne = statement<{ taken: boolean }>(
  'locks.tryOne',
  'SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS taken',
);

export function pgLockRepo(sql: Sql): LockRepo {
  return {
    persons: async (workspaceId, keys) => {
      const names = personLockNames(workspaceId, keys);
      // Sent without waiting for the grant: the match sent behind it runs after it on the server (a
      // snapshot of its own, taken once the locks are held) and the two cost one round trip.
      if (names.length > 0) await lockAll.soon(sql, names);
    },
    integration: async (integrationId) => void (await lockOne.run(sql, integrationLockName(integrationId))),
    legacyTags: async (workspaceId) => void (await lockOne.run(sql, legacyTagsLockName(workspaceId))),
    operatorNames: async () => void (await lockOne.run(sql, OPERATOR_NAMES_LOCK)),
    webhookEndpoints: async () => void (await lockOne.run(sql, WEBHOOK_ENDPOINTS_LOCK)),
    tryRetention: async () => (await tryOne.one(sql, retentionLockName))!.taken,
  };
}
